//! The typed messages of the team bus and their on-disk record (CCW's team_msg fields).

use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

/// One message as it travels between actors: who, to whom, a one-line summary, a typed payload.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub from: String,
    pub to: String,
    pub summary: String,
    pub payload: Payload,
}

impl Message {
    pub fn new(from: &str, to: &str, summary: impl Into<String>, payload: Payload) -> Self {
        Message {
            from: from.to_string(),
            to: to.to_string(),
            summary: summary.into(),
            payload,
        }
    }

    pub fn kind(&self) -> &'static str {
        self.payload.kind()
    }
}

/// Every message type; the serde form is `{"type": ..., "data": ...}` as in messages.jsonl.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
pub enum Payload {
    StateUpdate(Map<String, Value>),
    PipelineSelected(PipelineSelected),
    TaskUnblocked(TaskDispatched),
    Progress(Progress),
    Blocker(Blocker),
    TaskComplete(TaskComplete),
    StrategyReady(RoleReport),
    TestsGenerated(RoleReport),
    TestsRevised(RoleReport),
    TestsPassed(RoleReport),
    TestsFailed(RoleReport),
    CoverageReport(RoleReport),
    GcLoopTrigger(GcLoopTrigger),
    QualityGate(QualityGate),
    AnalysisReady(RoleReport),
    CapabilityGap(CapabilityGap),
    RoleAdded(RoleAdded),
    Error(ErrorReport),
    Shutdown(Shutdown),
}

impl Payload {
    pub fn kind(&self) -> &'static str {
        match self {
            Payload::StateUpdate(_) => "state_update",
            Payload::PipelineSelected(_) => "pipeline_selected",
            Payload::TaskUnblocked(_) => "task_unblocked",
            Payload::Progress(_) => "progress",
            Payload::Blocker(_) => "blocker",
            Payload::TaskComplete(_) => "task_complete",
            Payload::StrategyReady(_) => "strategy_ready",
            Payload::TestsGenerated(_) => "tests_generated",
            Payload::TestsRevised(_) => "tests_revised",
            Payload::TestsPassed(_) => "tests_passed",
            Payload::TestsFailed(_) => "tests_failed",
            Payload::CoverageReport(_) => "coverage_report",
            Payload::GcLoopTrigger(_) => "gc_loop_trigger",
            Payload::QualityGate(_) => "quality_gate",
            Payload::AnalysisReady(_) => "analysis_ready",
            Payload::CapabilityGap(_) => "capability_gap",
            Payload::RoleAdded(_) => "role_added",
            Payload::Error(_) => "error",
            Payload::Shutdown(_) => "shutdown",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PipelineSelected {
    pub pipeline: String,
    pub task_count: usize,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskDispatched {
    pub task_id: String,
    pub worker: String,
    pub attempt: u32,
    /// Handed to a busy inner-loop worker rather than a new one.
    pub queued: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    pub task_id: String,
    pub phase: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Blocker {
    pub task_id: String,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskComplete {
    pub task_id: String,
    pub outcome: crate::tasks::Outcome,
}

/// What a role reports about its own work (strategy_ready, tests_passed, …).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoleReport {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    #[serde(flatten)]
    pub fields: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GcLoopTrigger {
    pub layer: String,
    pub round: u32,
    pub after_task: String,
    pub pass_rate: f64,
    pub coverage: Option<f64>,
    pub coverage_target: Option<f64>,
    pub reason: String,
    pub fix_tasks: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QualityGate {
    pub layer: String,
    pub task_id: String,
    /// pass | revise | accepted_below_gate
    pub verdict: String,
    pub pass_rate: f64,
    pub coverage: Option<f64>,
    pub coverage_target: Option<f64>,
    pub rounds_used: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapabilityGap {
    pub gap: String,
    pub requested_by: String,
    #[serde(default)]
    pub suggested_capability: Option<String>,
    /// The coordinator's answer, in its echo of the gap: redirected, role created, paused, or
    /// not covered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoleAdded {
    pub role: String,
    pub prefix: Option<String>,
    pub task_id: Option<String>,
    pub source: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorReport {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    pub message: String,
    /// The task goes back to pending for another attempt.
    #[serde(default)]
    pub retry: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Shutdown {
    pub status: String,
    pub reason: String,
}

/// One line of messages.jsonl, exactly CCW's team_msg fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub id: String,
    pub ts: String,
    pub from: String,
    pub to: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub summary: String,
    #[serde(default)]
    pub data: Value,
}

impl Record {
    pub fn from_message(id: String, ts: String, msg: &Message) -> Self {
        let tagged = serde_json::to_value(&msg.payload).unwrap_or(Value::Null);
        Record {
            id,
            ts,
            from: msg.from.clone(),
            to: msg.to.clone(),
            kind: msg.kind().to_string(),
            summary: msg.summary.clone(),
            data: tagged.get("data").cloned().unwrap_or(Value::Null),
        }
    }

    /// The typed message back, when the type is one we know.
    pub fn to_message(&self) -> Option<Message> {
        let tagged = serde_json::json!({"type": self.kind, "data": self.data});
        let payload = serde_json::from_value(tagged).ok()?;
        Some(Message {
            from: self.from.clone(),
            to: self.to.clone(),
            summary: self.summary.clone(),
            payload,
        })
    }

    /// The number in `MSG-042`.
    pub fn seq(&self) -> Option<u64> {
        parse_seq(&self.id)
    }

    /// The task this record is about, when it names one.
    pub fn task_id(&self) -> Option<&str> {
        self.data.get("task_id").and_then(Value::as_str)
    }
}

/// A message's line of messages.jsonl after its id and timestamp: `,"from":…,"data":…}`. The
/// publisher serializes it on its own thread ([`Body::write`], into the writer's queue); the
/// log's writer only puts the id and the time in front ([`frame`]), so one writer thread is not
/// the bus's bottleneck.
pub struct Body(Vec<u8>);

impl Body {
    pub fn of(msg: &Message) -> Self {
        let mut bytes = Vec::with_capacity(256);
        Self::write(msg, &mut bytes);
        Body(bytes)
    }

    /// Appends `msg`'s line without its id and time to `out`: `,"from":…}` and a newline (the
    /// only one: JSON escapes those in strings).
    pub fn write(msg: &Message, out: &mut Vec<u8>) {
        #[derive(Serialize)]
        struct Rest<'a> {
            from: &'a str,
            to: &'a str,
            #[serde(rename = "type")]
            kind: &'static str,
            summary: &'a str,
            data: Data<'a>,
        }
        let rest = Rest {
            from: &msg.from,
            to: &msg.to,
            kind: msg.kind(),
            summary: &msg.summary,
            data: Data(&msg.payload),
        };
        let start = out.len();
        serde_json::to_writer(&mut *out, &rest).expect("a message serializes");
        // `{"from":…}` → `,"from":…}`: the line's own `{` comes before the id.
        out[start] = b',';
        out.push(b'\n');
    }

    /// Appends the whole line to `out`.
    pub fn line(&self, id: &str, ts: &str, out: &mut Vec<u8>) {
        frame(&self.0, id, ts, out);
    }
}

/// Appends a whole line to `out`: the id and the time, then `body` (what [`Body::write`] made).
/// `id` and `ts` need no escaping (`MSG-N`, RFC 3339).
pub fn frame(body: &[u8], id: &str, ts: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"id\":\"");
    out.extend_from_slice(id.as_bytes());
    out.extend_from_slice(b"\",\"ts\":\"");
    out.extend_from_slice(ts.as_bytes());
    out.push(b'"');
    out.extend_from_slice(body);
}

/// A payload's content: what its tagged form holds under `data`.
pub struct Data<'a>(pub &'a Payload);

impl Serialize for Data<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Payload::StateUpdate(d) => d.serialize(s),
            Payload::PipelineSelected(d) => d.serialize(s),
            Payload::TaskUnblocked(d) => d.serialize(s),
            Payload::Progress(d) => d.serialize(s),
            Payload::Blocker(d) => d.serialize(s),
            Payload::TaskComplete(d) => d.serialize(s),
            Payload::StrategyReady(d)
            | Payload::TestsGenerated(d)
            | Payload::TestsRevised(d)
            | Payload::TestsPassed(d)
            | Payload::TestsFailed(d)
            | Payload::CoverageReport(d)
            | Payload::AnalysisReady(d) => d.serialize(s),
            Payload::GcLoopTrigger(d) => d.serialize(s),
            Payload::QualityGate(d) => d.serialize(s),
            Payload::CapabilityGap(d) => d.serialize(s),
            Payload::RoleAdded(d) => d.serialize(s),
            Payload::Error(d) => d.serialize(s),
            Payload::Shutdown(d) => d.serialize(s),
        }
    }
}

pub fn parse_seq(id: &str) -> Option<u64> {
    id.strip_prefix("MSG-")?.parse().ok()
}

pub fn format_id(seq: u64) -> String {
    format!("MSG-{seq:03}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_round_trips_typed_payload() {
        let msg = Message::new(
            "executor",
            "coordinator",
            "done",
            Payload::Progress(Progress {
                task_id: "TESTRUN-001".into(),
                phase: "running".into(),
                progress_pct: Some(50.0),
                detail: None,
            }),
        );
        let rec = Record::from_message(format_id(7), "ts".into(), &msg);
        assert_eq!(rec.id, "MSG-007");
        assert_eq!(rec.kind, "progress");
        assert_eq!(rec.task_id(), Some("TESTRUN-001"));
        let line = serde_json::to_string(&rec).unwrap();
        assert!(line.starts_with(
            r#"{"id":"MSG-007","ts":"ts","from":"executor","to":"coordinator","type":"progress""#
        ));
        let back: Record = serde_json::from_str(&line).unwrap();
        assert_eq!(back.to_message().unwrap(), msg);
    }

    /// The bus writes [`Body`] lines: byte for byte what the [`Record`] of the same message says, for
    /// messages of every kind a real run logs.
    #[test]
    fn a_line_is_the_records_bytes_without_a_value_in_between() {
        for text in include_str!("testdata/one_of_each.jsonl").lines() {
            let rec: Record = serde_json::from_str(text).unwrap();
            let msg = rec.to_message().unwrap_or_else(|| panic!("{text}"));
            let via_value =
                serde_json::to_string(&Record::from_message(rec.id.clone(), rec.ts.clone(), &msg))
                    .unwrap();
            let mut framed = Vec::new();
            Body::of(&msg).line(&rec.id, &rec.ts, &mut framed);
            assert_eq!(String::from_utf8(framed).unwrap(), via_value + "\n");
        }
    }
}
