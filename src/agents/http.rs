//! The http backend: one chat-completions call to an OpenAI-compatible endpoint (OpenAI, Ollama,
//! llama.cpp server, vLLM), streaming off, with a per-call timeout and retries with backoff on
//! 429 and 5xx (a `Retry-After` of a few seconds is honoured).

use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The answer of one call.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub text: String,
    pub tokens_in: Option<u64>,
    pub tokens_out: Option<u64>,
    /// Attempts made (1 = no retry).
    pub attempts: u32,
}

/// Why a call gave no answer; each is a reason to try the next backend of the chain.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CallError {
    #[error("rate limited (HTTP 429) after {attempts} attempt(s)")]
    RateLimited { attempts: u32 },
    #[error("HTTP {status} after {attempts} attempt(s): {body}")]
    Status {
        status: u16,
        attempts: u32,
        body: String,
    },
    #[error("no answer within {0} s")]
    Timeout(u64),
    #[error("cannot reach {url}: {problem}")]
    Transport { url: String, problem: String },
    #[error("the answer is not a chat completion: {0}")]
    Unparsable(String),
    #[error("{0} is not set (api_key_env)")]
    MissingKey(String),
}

/// What one call needs.
pub struct Request<'a> {
    pub base_url: &'a str,
    pub model: &'a str,
    /// The key's value (read from `api_key_env` by the caller), if any.
    pub api_key: Option<&'a str>,
    pub system: &'a str,
    pub prompt: &'a str,
    pub timeout: Duration,
    pub max_retries: u32,
    /// First backoff; doubled on each retry.
    pub backoff: Duration,
}

/// The longest wait a `Retry-After` may ask for (and never past the call's deadline).
const MAX_RETRY_AFTER: Duration = Duration::from_secs(30);

pub fn complete(req: &Request) -> Result<Answer, CallError> {
    let url = format!("{}/chat/completions", req.base_url.trim_end_matches('/'));
    // One deadline for the whole call, retries and waits included.
    let deadline = Instant::now() + req.timeout;
    let body = json!({
        "model": req.model,
        "stream": false,
        "messages": [
            {"role": "system", "content": req.system},
            {"role": "user", "content": req.prompt},
        ],
    });
    let started = Instant::now();
    let mut attempts = 0;
    let mut backoff = req.backoff;
    loop {
        attempts += 1;
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(CallError::Timeout(req.timeout.as_secs()));
        }
        let agent = ureq::AgentBuilder::new().timeout(left).build();
        let mut call = agent.post(&url).set("Content-Type", "application/json");
        if let Some(key) = req.api_key {
            call = call.set("Authorization", &format!("Bearer {key}"));
        }
        let retry_after = match call.send_json(&body) {
            Ok(resp) => {
                let value: Value = resp.into_json().map_err(|e| {
                    if Instant::now() >= deadline {
                        CallError::Timeout(req.timeout.as_secs())
                    } else {
                        CallError::Unparsable(e.to_string())
                    }
                })?;
                return answer_of(&value, attempts);
            }
            Err(ureq::Error::Status(status, resp)) => {
                let wait = resp
                    .header("Retry-After")
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    .map(Duration::from_secs);
                let text = resp.into_string().unwrap_or_default();
                let retryable = status == 429 || status >= 500;
                if !retryable || attempts > req.max_retries {
                    return Err(if status == 429 {
                        CallError::RateLimited { attempts }
                    } else {
                        CallError::Status {
                            status,
                            attempts,
                            body: text.chars().take(300).collect(),
                        }
                    });
                }
                wait
            }
            Err(ureq::Error::Transport(t)) => {
                // ureq reports a read or connect timeout as the socket's io error.
                let timed_out = std::error::Error::source(&t)
                    .and_then(|s| s.downcast_ref::<std::io::Error>())
                    .is_some_and(|e| {
                        matches!(
                            e.kind(),
                            std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
                        )
                    });
                let problem = t.to_string();
                if timed_out || started.elapsed() >= req.timeout || Instant::now() >= deadline {
                    return Err(CallError::Timeout(req.timeout.as_secs()));
                }
                return Err(CallError::Transport {
                    url: url.clone(),
                    problem,
                });
            }
        };
        let wait = retry_after
            .unwrap_or(backoff)
            .min(MAX_RETRY_AFTER)
            .min(deadline.saturating_duration_since(Instant::now()));
        std::thread::sleep(wait);
        backoff = backoff.saturating_mul(2);
    }
}

fn answer_of(value: &Value, attempts: u32) -> Result<Answer, CallError> {
    let text = value["choices"][0]["message"]["content"]
        .as_str()
        .ok_or_else(|| {
            CallError::Unparsable(format!(
                "no choices[0].message.content in {}",
                value.to_string().chars().take(200).collect::<String>()
            ))
        })?;
    Ok(Answer {
        text: text.to_string(),
        tokens_in: value["usage"]["prompt_tokens"].as_u64(),
        tokens_out: value["usage"]["completion_tokens"].as_u64(),
        attempts,
    })
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpListener;

    use super::*;

    /// A chat-completions server on 127.0.0.1 that answers each connection with the next of
    /// `replies` (status, extra headers, body, delay); returns its base URL.
    fn server(replies: Vec<(u16, &'static str, String, Duration)>) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for ((status, headers, body, delay), stream) in
                replies.into_iter().zip(listener.incoming())
            {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut length = 0usize;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                }
                let mut request = vec![0u8; length];
                let _ = reader.read_exact(&mut request);
                let request: Value = serde_json::from_slice(&request).unwrap_or(Value::Null);
                assert_eq!(request["stream"], false);
                assert_eq!(request["messages"][1]["role"], "user");
                std::thread::sleep(delay);
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{headers}Connection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        url
    }

    fn ok_body(text: &str) -> String {
        json!({"choices": [{"message": {"role": "assistant", "content": text}}],
               "usage": {"prompt_tokens": 12, "completion_tokens": 34}})
        .to_string()
    }

    fn request(url: &str, timeout: Duration) -> Request<'_> {
        Request {
            base_url: url,
            model: "m",
            api_key: Some("k"),
            system: "you write tests",
            prompt: "write one",
            timeout,
            max_retries: 2,
            backoff: Duration::from_millis(10),
        }
    }

    #[test]
    fn a_429_then_success_is_retried_and_tokens_are_counted() {
        let url = server(vec![
            (429, "Retry-After: 0\r\n", "{}".into(), Duration::ZERO),
            (
                200,
                "",
                ok_body("```python\n# path: test_a.py\n```"),
                Duration::ZERO,
            ),
        ]);
        let a = complete(&request(&url, Duration::from_secs(10))).unwrap();
        assert_eq!(a.attempts, 2);
        assert_eq!((a.tokens_in, a.tokens_out), (Some(12), Some(34)));
        assert!(a.text.contains("test_a.py"));
    }

    #[test]
    fn a_500_that_persists_exhausts_the_retries() {
        let url = server(vec![
            (500, "", "boom".into(), Duration::ZERO),
            (500, "", "boom".into(), Duration::ZERO),
            (500, "", "boom".into(), Duration::ZERO),
        ]);
        let err = complete(&request(&url, Duration::from_secs(10))).unwrap_err();
        assert_eq!(
            err,
            CallError::Status {
                status: 500,
                attempts: 3,
                body: "boom".into()
            }
        );
    }

    #[test]
    fn a_slow_answer_past_the_timeout_is_a_timeout() {
        let url = server(vec![(200, "", ok_body("late"), Duration::from_secs(3))]);
        let started = Instant::now();
        let err = complete(&request(&url, Duration::from_millis(500))).unwrap_err();
        assert_eq!(err, CallError::Timeout(0));
        assert!(started.elapsed() < Duration::from_secs(3));
    }

    #[test]
    fn a_client_error_is_not_retried_and_garbage_is_unparsable() {
        let url = server(vec![(400, "", "bad model".into(), Duration::ZERO)]);
        let err = complete(&request(&url, Duration::from_secs(10))).unwrap_err();
        assert!(matches!(
            err,
            CallError::Status {
                status: 400,
                attempts: 1,
                ..
            }
        ));
        let url = server(vec![(200, "", "{\"choices\": []}".into(), Duration::ZERO)]);
        let err = complete(&request(&url, Duration::from_secs(10))).unwrap_err();
        assert!(matches!(err, CallError::Unparsable(_)));
        let err = complete(&request("http://127.0.0.1:9/v1", Duration::from_secs(2))).unwrap_err();
        assert!(matches!(err, CallError::Transport { .. }), "{err}");
    }
}
