// tests/integration/runtimes.sh: a Rust program under the preload (std's
// runtime: its own alternate signal stacks, unwind tables with a
// personality routine, threads, a heap that grows and shrinks).
use std::collections::HashMap;
use std::thread;

fn main() {
    let mut v: Vec<u64> = (0..1_000_000u64).map(|i| (i * 2654435761) % 1000003).collect();
    v.sort();
    let mut m = HashMap::new();
    for (i, x) in v.iter().enumerate().step_by(7) {
        m.insert(*x, i);
    }
    let handles: Vec<_> = (0..4u64)
        .map(|t| {
            thread::spawn(move || {
                let b: Vec<u64> = (0..200_000u64).map(|i| i ^ t).collect();
                b.iter().sum::<u64>()
            })
        })
        .collect();
    let s: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
    println!("sorted {} distinct {} threads {}", v.len(), m.len(), s);
}
