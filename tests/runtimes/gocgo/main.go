// tests/integration/runtimes.sh: a Go program built with cgo, so that it is
// dynamically linked and the preload reaches it.  Go maps its heap and
// goroutine stacks through cgo's mmap, installs signal stacks and handlers
// of its own, and reads files into its heap with raw system calls: the
// bytes read must be the bytes in the file, whatever wss has armed.
package main

/*
#include <stdlib.h>
#include <string.h>
static void *cbuf(int n) { char *p = malloc(n); memset(p, 1, n); return p; }
*/
import "C"

import (
	"fmt"
	"os"
	"sort"
	"sync"
	"time"
	"unsafe"
)

func main() {
	m := make(map[int]int)
	for i := 0; i < 300000; i++ {
		m[i] = i * 7
	}
	s := make([]int, 0, len(m))
	for _, v := range m {
		s = append(s, v)
	}
	sort.Ints(s)
	var wg sync.WaitGroup
	sums := make([]int, 4)
	for t := 0; t < 4; t++ {
		wg.Add(1)
		go func(t int) {
			defer wg.Done()
			b := make([]byte, 2<<20)
			for i := range b {
				b[i] = byte(i + t)
			}
			for _, x := range b {
				sums[t] += int(x)
			}
		}(t)
	}
	wg.Wait()
	p := C.cbuf(1 << 20)
	C.free(unsafe.Pointer(p))
	// The same buffer, read into again after intervals have passed.
	buf := make([]byte, 1<<16)
	f, err := os.Open(os.Args[1])
	if err != nil {
		panic(err)
	}
	total := 0
	for i := 0; i < 10; i++ {
		time.Sleep(30 * time.Millisecond)
		n, _ := f.ReadAt(buf, 0)
		total += n
	}
	fmt.Println(len(m), s[len(s)-1], sums[0]+sums[3], total)
}
