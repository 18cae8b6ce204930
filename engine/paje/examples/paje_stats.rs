//! `cargo run --release --example paje_stats -- FILE`: times reading,
//! simulating and dumping a trace separately (a quick profiling aid).

use std::time::Instant;

use traceloom_paje::{
    EventReader, LoadOptions, NullSink, PjDumpOptions, ReaderOptions, Simulator, Trace, TraceFile,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: paje_stats FILE")?;
    let file = TraceFile::open(&path)?;

    let t = Instant::now();
    let mut reader = EventReader::new(&file, ReaderOptions::default());
    let n = reader.by_ref().count();
    eprintln!("read:      {n} events in {:.2?}", t.elapsed());

    let t = Instant::now();
    let mut sim = Simulator::default();
    for ev in EventReader::new(&file, ReaderOptions::default()) {
        sim.apply(&ev, &mut NullSink);
    }
    sim.finish(&mut NullSink);
    eprintln!("simulate:  {:.2?}", t.elapsed());

    let t = Instant::now();
    let trace = Trace::open_with(&path, &LoadOptions::pj_dump())?;
    eprintln!(
        "load:      {} entities in {:.2?}",
        trace.entities.entity_count(),
        t.elapsed()
    );

    let t = Instant::now();
    trace.write_pj_dump(&PjDumpOptions::default(), std::io::sink())?;
    eprintln!("dump:      {:.2?}", t.elapsed());
    Ok(())
}
