// Names that need demangling (tests/integration/demangle.sh): a buffer
// allocated and written in functions of a module, so that the allocation
// site's stack and the first-touch sites read as Rust paths.  Built with
// legacy and with v0 symbol mangling.
mod names {
    #[inline(never)]
    pub fn grow_buffer(n: usize) -> Vec<u8> {
        let mut v = Vec::with_capacity(n);
        v.resize(n, 0u8);
        v
    }

    #[inline(never)]
    pub fn fill_pages(v: &mut [u8]) {
        for i in (0..v.len()).step_by(4096) {
            v[i] = v[i].wrapping_add(1);
        }
    }
}

fn main() {
    let mut v = names::grow_buffer(16 << 20);
    for _ in 0..3 {
        names::fill_pages(&mut v);
    }
    println!("names: {}", v[4096] as u32 + v[v.len() - 1] as u32);
}
