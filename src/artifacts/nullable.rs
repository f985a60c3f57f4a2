//! Fields that one shape of a record leaves out and another writes as `null` (a run that ran
//! nothing writes `"coverage": null`; an environment failure has no `coverage` key at all).
//! `None` is left out, `Some(None)` is written as `null`, so the files keep their shapes.

use serde::{Deserialize, Deserializer};

/// Absent (`None`), `null` (`Some(None)`) or a value.
pub type Nullable<T> = Option<Option<T>>;

/// Reads a present key (null or not) as `Some`; an absent key takes the field's default (`None`).
pub fn present<'de, D, T>(d: D) -> Result<Nullable<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

/// Reads `null` as the type's default, as an absent key would be: hand-written records write
/// `null` for what they do not know.
pub fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Option::<T>::deserialize(d).map(Option::unwrap_or_default)
}
