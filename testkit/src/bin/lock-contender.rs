//! One process contending for the scanner lock, for the cross-process tests.
//!
//! ```text
//! lock-contender <data-dir> <ttl-ms>
//! ```
//!
//! Uses the KV REST store when its variables are set, else the embedded store
//! in `<data-dir>`. Prints `acquired` or `busy`. A holder then waits for its
//! standard input to close, makes a fenced write (`written` or `fenced-out`)
//! and releases (`released` or `not-held`).

use freedom_shared::adapters::Stores;
use freedom_shared::config;
use std::io::{Read, Write};
use std::time::Duration;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: lock-contender <data-dir> <ttl-ms>";
    let data_dir = args.next().ok_or(usage)?;
    let ttl = Duration::from_millis(args.next().ok_or(usage)?.parse()?);
    let kv = config::kv_config(|name| std::env::var(name).ok())?;
    let stores = Stores::open(kv.as_ref(), std::path::Path::new(&data_dir))?;
    let say = |word: &str| -> std::io::Result<()> {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{word}")?;
        out.flush()
    };
    let Some(token) = stores.scan.acquire(ttl).await? else {
        say("busy")?;
        return Ok(());
    };
    say("acquired")?;
    let mut rest = Vec::new();
    std::io::stdin().read_to_end(&mut rest)?;
    let entry = vec![(
        "report".to_owned(),
        format!("written by {}", std::process::id()),
    )];
    let written = stores.scan.write_fenced(&token, &entry).await?;
    say(if written { "written" } else { "fenced-out" })?;
    let released = stores.scan.release(&token).await?;
    say(if released { "released" } else { "not-held" })?;
    Ok(())
}
