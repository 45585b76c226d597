//! moto's server (PyPI `moto[server]`) as a private EventBridge for tests,
//! with an SQS queue as the sink: a rule on the bus forwards every event
//! whose `source` is `freedom-fund` to the queue, and [`MotoServer::drain`]
//! reads what arrived. The AWS calls that set this up use boto3 (moto's own
//! dependency), so the project's Rust code is only ever the publisher.

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};

/// A running `moto_server`, killed when dropped.
#[derive(Debug)]
pub struct MotoServer {
    child: Child,
    endpoint: String,
}

const PYTHON_SETUP: &str = r#"
import json, sys, boto3
endpoint, bus = sys.argv[1], sys.argv[2]
kw = dict(endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="testing", aws_secret_access_key="testing")
events, sqs = boto3.client("events", **kw), boto3.client("sqs", **kw)
events.create_event_bus(Name=bus)
url = sqs.create_queue(QueueName=bus + "-sink")["QueueUrl"]
arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
events.put_rule(Name="all", EventBusName=bus, EventPattern=json.dumps({"source": ["freedom-fund"]}))
events.put_targets(Rule="all", EventBusName=bus, Targets=[{"Id": "sink", "Arn": arn}])
print(url)
"#;

const PYTHON_DRAIN: &str = r#"
import json, sys, boto3
endpoint, url = sys.argv[1], sys.argv[2]
sqs = boto3.client("sqs", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="testing", aws_secret_access_key="testing")
out = []
while True:
    got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
    if not got:
        break
    for m in got:
        out.append(json.loads(m["Body"]))
        sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
print(json.dumps(out))
"#;

fn python(script: &str, args: &[&str]) -> String {
    let output = Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .expect("python3 runs");
    assert!(
        output.status.success(),
        "boto3 against moto failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .expect("UTF-8")
        .trim()
        .to_owned()
}

impl MotoServer {
    /// Starts `moto_server` on a free loopback port and waits until it
    /// says it is running.
    pub fn start() -> MotoServer {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let mut child = Command::new("moto_server")
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("moto_server runs (pip install 'moto[server]')");
        let stderr = child.stderr.take().expect("piped");
        let mut lines = BufReader::new(stderr).lines();
        let running = lines
            .by_ref()
            .map_while(Result::ok)
            .any(|line| line.contains("Running on"));
        assert!(running, "moto_server did not start");
        std::thread::spawn(move || lines.for_each(drop));
        MotoServer {
            child,
            endpoint: format!("http://127.0.0.1:{port}"),
        }
    }

    /// The endpoint URL (what `AWS_ENDPOINT_URL_EVENTBRIDGE` is set to).
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Creates bus `bus` and a queue receiving its `freedom-fund` events;
    /// returns the queue's URL.
    pub fn sink(&self, bus: &str) -> String {
        python(PYTHON_SETUP, &[&self.endpoint, bus])
    }

    /// Every event that reached the queue since the last drain.
    pub fn drain(&self, queue_url: &str) -> Vec<Value> {
        serde_json::from_str(&python(PYTHON_DRAIN, &[&self.endpoint, queue_url])).expect("JSON")
    }

    /// The variables that point the publisher at this server and `bus`
    /// through the AWS SDK's default chain.
    pub fn env(&self, bus: &str) -> Vec<(String, String)> {
        vec![
            ("FF_EVENT_BUS_NAME".into(), bus.into()),
            ("AWS_ENDPOINT_URL_EVENTBRIDGE".into(), self.endpoint.clone()),
            ("AWS_REGION".into(), "us-east-1".into()),
            ("AWS_ACCESS_KEY_ID".into(), "testing".into()),
            ("AWS_SECRET_ACCESS_KEY".into(), "testing".into()),
        ]
    }
}

impl Drop for MotoServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
