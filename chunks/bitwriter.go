package chunks

import "encoding/binary"

// bitWriter appends bits to a byte slice, most significant bit first.
//
// Invariants: free is the number of low-order bits of the last byte of buf
// not written yet (0..8), and those bits are zero. Our writes never leave
// free == 8; it occurs only when resuming a chunk from older Prometheus
// versions, whose writer left an all-zero byte after a whole-byte field that
// ended on a byte boundary. Writing into that byte continues such a chunk
// exactly as that writer would have.
type bitWriter struct {
	buf  []byte
	free uint8
}

// writeBits appends the low nbits bits of u (0 <= nbits <= 64), most
// significant first; higher bits of u are ignored. It allocates only when buf
// has to grow.
func (w *bitWriter) writeBits(u uint64, nbits uint8) {
	if nbits == 0 {
		return
	}
	if nbits < 64 {
		u &= 1<<nbits - 1
	}
	if w.free != 0 {
		i := len(w.buf) - 1
		if nbits <= w.free {
			w.free -= nbits
			w.buf[i] |= byte(u << w.free)
			return
		}
		nbits -= w.free
		w.buf[i] |= byte(u >> nbits)
		w.free = 0
	}
	// Now byte-aligned: store the bits left-aligned as 8 bytes and keep the
	// ones used. The unused bytes are zeros written past len(buf), where no
	// reader looks, and are overwritten by later writes.
	n := len(w.buf)
	if cap(w.buf)-n < 8 {
		w.grow()
	}
	w.buf = binary.BigEndian.AppendUint64(w.buf, u<<(64-nbits))
	w.buf = w.buf[:n+int(nbits+7)/8]
	w.free = (8 - nbits%8) % 8
}

// grow makes room for at least 8 more bytes. It grows by about a quarter
// (to a whole malloc size class, so no capacity is hidden in rounding)
// rather than append's doubling: a head chunk is open for its whole life,
// and doubling leaves it a third empty on average.
func (w *bitWriter) grow() {
	n := len(w.buf)
	buf := make([]byte, n, sizeClass(n+8+n/4))
	copy(buf, w.buf)
	w.buf = buf
}

// sizeClasses are the Go runtime's small malloc size classes up to 4 KiB
// (runtime/sizeclasses.go); an allocation is rounded up to one of them.
var sizeClasses = [...]int{
	8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224,
	240, 256, 288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768,
	896, 1024, 1152, 1280, 1408, 1536, 1792, 2048, 2304, 2688, 3072, 3200,
	3456, 4096,
}

// sizeClass returns the smallest size class ≥ n, or n itself above 4 KiB.
func sizeClass(n int) int {
	for _, c := range sizeClasses {
		if c >= n {
			return c
		}
	}
	return n
}
