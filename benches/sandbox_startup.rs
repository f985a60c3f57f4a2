//! What the sandbox costs per child: start-to-exit time of `true` and of `python3 -c pass`,
//! unsandboxed and sandboxed (each mechanism the machine grants), over many runs.
//!
//! `cargo bench --bench sandbox_startup` (BENCHMARKS.md has the figures).

use std::path::Path;
use std::time::{Duration, Instant};

use team_testing::proc::run_sandboxed;
use team_testing::sandbox::{capabilities, Sandbox, SandboxSettings};

const RUNS: usize = 200;

fn measure(label: &str, sandbox: Option<&Sandbox>, argv: &[&str], cwd: &Path) -> f64 {
    let mut samples: Vec<Duration> = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let start = Instant::now();
        let out = run_sandboxed(sandbox, argv, cwd, &[], None, Duration::from_secs(30))
            .expect("the child runs");
        assert!(out.success(), "{label}: {}", out.stderr);
        samples.push(start.elapsed());
    }
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let median = ms(samples[RUNS / 2]);
    println!(
        "{label:<44} median {median:7.3} ms   p90 {:7.3} ms   min {:7.3} ms",
        ms(samples[RUNS * 9 / 10]),
        ms(samples[0])
    );
    median
}

fn main() {
    let caps = capabilities();
    println!(
        "landlock ABI {:?}, netns {}, mountns {}, pids cgroup {}; {RUNS} runs each",
        caps.landlock_abi,
        caps.netns,
        caps.mountns,
        caps.pids_cgroup.is_some()
    );
    let dir = tempfile::tempdir().unwrap();
    let settings = SandboxSettings::default();
    let sandbox = Sandbox::new(&settings, &dir.path().join("sb"), &[], &[]).unwrap();
    let open_net = SandboxSettings {
        allow_network: true,
        ..Default::default()
    };
    let sandbox_net = Sandbox::new(&open_net, &dir.path().join("sb-net"), &[], &[]).unwrap();
    let cwd = sandbox.root().to_path_buf();
    // The interpreter itself, not a version manager's shim in front of it.
    let python = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|_| "python3".into());
    for argv in [&["true"][..], &[python.as_str(), "-c", "pass"][..]] {
        let name = argv.join(" ");
        let plain = measure(&format!("{name}: unsandboxed"), None, argv, &cwd);
        let full = measure(
            &format!("{name}: sandboxed, network off"),
            Some(&sandbox),
            argv,
            &cwd,
        );
        let net = measure(
            &format!("{name}: sandboxed, --allow-network"),
            Some(&sandbox_net),
            argv,
            sandbox_net.root(),
        );
        println!(
            "{name}: overhead per child {:.3} ms (network off), {:.3} ms (network on)\n",
            full - plain,
            net - plain
        );
    }
}
