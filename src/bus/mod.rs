//! The team bus: typed messages, the Bus actor that fans them out to subscribers, the JSONL mirror,
//! and readers of the log.

mod log_file;
pub mod message;
pub mod reader;
pub mod writer;

use std::sync::Arc;

use actix::prelude::*;

pub use message::{Message, Payload, Record};
pub use writer::{Tail, Writer, WriterHandle};

/// A message delivered to a subscriber.
#[derive(actix::Message, Clone)]
#[rtype(result = "()")]
pub struct Delivered(pub Arc<Message>);

#[derive(actix::Message)]
#[rtype(result = "()")]
pub struct Subscribe(pub Recipient<Delivered>);

#[derive(actix::Message)]
#[rtype(result = "()")]
struct Fanout(Arc<Message>);

/// Fans every published message out to its subscribers (coordinator, progress view), in order.
#[derive(Default)]
pub struct Bus {
    subscribers: Vec<Recipient<Delivered>>,
}

impl Actor for Bus {
    type Context = Context<Self>;
}

impl Handler<Subscribe> for Bus {
    type Result = ();
    fn handle(&mut self, msg: Subscribe, _: &mut Self::Context) {
        self.subscribers.push(msg.0);
    }
}

impl Handler<Fanout> for Bus {
    type Result = ();
    fn handle(&mut self, msg: Fanout, _: &mut Self::Context) {
        self.subscribers.retain(|s| s.connected());
        for s in &self.subscribers {
            s.do_send(Delivered(msg.0.clone()));
        }
    }
}

/// What publishers hold: publishing appends to the JSONL mirror first (so the log order is the
/// publish order), then hands the message to the Bus actor for fan-out.
#[derive(Clone)]
pub struct BusHandle {
    writer: WriterHandle,
    bus: Addr<Bus>,
}

impl BusHandle {
    pub fn new(writer: WriterHandle, bus: Addr<Bus>) -> Self {
        BusHandle { writer, bus }
    }

    pub fn publish(&self, msg: Message) {
        self.writer.append(&msg);
        self.bus.do_send(Fanout(Arc::new(msg)));
    }

    /// Blocks until everything published so far is durable on disk.
    pub fn sync(&self) -> Result<(), writer::LogError> {
        self.writer.sync()
    }

    /// Blocks until everything published so far is written, and takes what is not yet durable
    /// for a beat's journal line to carry ([`WriterHandle::take_tail`]).
    pub fn take_tail(&self) -> Result<Tail, writer::LogError> {
        self.writer.take_tail()
    }

    pub fn subscribe(&self, r: Recipient<Delivered>) {
        self.bus.do_send(Subscribe(r));
    }
}
