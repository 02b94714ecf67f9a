package encoding

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/internal/corrupt"
)

// op is one read of a Decbuf; it returns what was read, as an integer or
// bytes.
type op struct {
	name string
	read func(d *Decbuf) (uint64, []byte)
}

var ops = []op{
	{"Byte", func(d *Decbuf) (uint64, []byte) { return uint64(d.Byte()), nil }},
	{"Be32", func(d *Decbuf) (uint64, []byte) { return uint64(d.Be32()), nil }},
	{"Be64", func(d *Decbuf) (uint64, []byte) { return d.Be64(), nil }},
	{"Uvarint", func(d *Decbuf) (uint64, []byte) { return d.Uvarint(), nil }},
	{"Uvarint32", func(d *Decbuf) (uint64, []byte) { return uint64(d.Uvarint32()), nil }},
	{"Varint", func(d *Decbuf) (uint64, []byte) { return uint64(d.Varint()), nil }},
	{"UvarintBytes", func(d *Decbuf) (uint64, []byte) { return 0, d.UvarintBytes() }},
	{"Skip3", func(d *Decbuf) (uint64, []byte) { d.Skip(3); return 0, nil }},
}

func opNamed(t testing.TB, name string) op {
	for _, o := range ops {
		if o.name == name {
			return o
		}
	}
	require.Failf(t, "unknown op", "no op %s", name)
	return op{}
}

func TestDecbuf(t *testing.T) {
	var (
		u64max = binary.AppendUvarint(nil, math.MaxUint64)
		over   = []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}
		str    = append(binary.AppendUvarint(nil, 3), "abc"...)
	)
	for _, tc := range []struct {
		name    string
		in      []byte
		op      string
		want    uint64
		bytes   string
		left    int
		cause   error // nil: the read succeeds
		errOff  int64
		errFile string
	}{
		{name: "byte", in: []byte{7, 8}, op: "Byte", want: 7, left: 1},
		{name: "byte of nothing", in: nil, op: "Byte", cause: ErrShort},
		{name: "be32", in: []byte{1, 2, 3, 4, 5}, op: "Be32", want: 0x01020304, left: 1},
		{name: "be32 short", in: []byte{1, 2, 3}, op: "Be32", cause: ErrShort},
		{name: "be64", in: []byte{0, 0, 0, 0, 0, 0, 1, 0}, op: "Be64", want: 256},
		{name: "be64 short", in: []byte{1, 2, 3, 4, 5, 6, 7}, op: "Be64", cause: ErrShort},
		{name: "uvarint", in: []byte{0xac, 0x02, 9}, op: "Uvarint", want: 300, left: 1},
		{name: "uvarint max", in: u64max, op: "Uvarint", want: math.MaxUint64},
		{name: "uvarint truncated", in: []byte{0x80}, op: "Uvarint", cause: ErrShort},
		{name: "uvarint overflow", in: over, op: "Uvarint", cause: ErrVarint},
		{name: "uvarint32", in: binary.AppendUvarint(nil, math.MaxUint32), op: "Uvarint32", want: math.MaxUint32},
		{name: "uvarint32 overflow", in: binary.AppendUvarint(nil, math.MaxUint32+1), op: "Uvarint32", cause: ErrOverflow},
		{name: "varint", in: binary.AppendVarint(nil, -5), op: "Varint", want: math.MaxUint64 - 4},
		{name: "varint truncated", in: []byte{0xff}, op: "Varint", cause: ErrShort},
		{name: "bytes", in: append(str, 1), op: "UvarintBytes", bytes: "abc", left: 1},
		{name: "bytes empty", in: []byte{0}, op: "UvarintBytes", bytes: ""},
		{name: "bytes too long", in: str[:3], op: "UvarintBytes", cause: ErrShort},
		{name: "bytes bad length", in: over, op: "UvarintBytes", cause: ErrVarint},
		{name: "skip", in: []byte{1, 2, 3, 4}, op: "Skip3", left: 1},
		{name: "skip short", in: []byte{1, 2}, op: "Skip3", cause: ErrShort},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, at := range []struct {
				file string
				base int64
			}{{"", 0}, {"dir/f", 100}} {
				d := NewDecbuf(tc.in)
				got, b := opNamed(t, tc.op).read(&d)
				if tc.cause == nil {
					require.NoError(t, d.Err())
					require.Equal(t, tc.want, got)
					require.Equal(t, tc.bytes, string(b))
					require.Equal(t, tc.left, d.Len())
					require.Equal(t, len(tc.in)-tc.left, d.Offset())
					continue
				}
				require.True(t, d.Failed())
				err := d.Err()
				if at.file != "" {
					err = d.ErrIn(at.file, at.base)
				}
				require.ErrorIs(t, err, tc.cause)
				require.ErrorIs(t, err, corrupt.ErrCorrupt)
				var ce *corrupt.Error
				require.ErrorAs(t, err, &ce)
				require.Equal(t, at.file, ce.File)
				require.Equal(t, at.base+tc.errOff, ce.Offset)
				require.Zero(t, got)
				require.Nil(t, b)
				require.Zero(t, d.Len())
			}
		})
	}
}

// TestDecbufSticky checks that the first error stays and later reads
// return zero values.
func TestDecbufSticky(t *testing.T) {
	d := NewDecbuf([]byte{5, 0xff})
	require.Equal(t, byte(5), d.Byte())
	require.Zero(t, d.Varint())
	first := d.Err()
	var ce *corrupt.Error
	require.ErrorAs(t, first, &ce)
	require.Equal(t, int64(1), ce.Offset)
	for _, o := range ops {
		got, b := o.read(&d)
		require.Zero(t, got, o.name)
		require.Nil(t, b, o.name)
		require.Same(t, first, d.Err(), o.name)
	}
	d.Failf("later failure %d", 3)
	require.Same(t, first, d.Err())
}

func TestDecbufFail(t *testing.T) {
	d := NewDecbuf([]byte{1, 2, 3})
	require.NoError(t, d.ErrIn("f", 10))
	d.Byte()
	d.Failf("bad marker %d", 2)
	require.EqualError(t, d.Err(), "corrupt data at offset 1: bad marker 2")
	require.EqualError(t, d.ErrIn("f", 10), "corrupt data in f at offset 11: bad marker 2")
	require.Zero(t, d.Len())

	cause := errors.New("unknown marker")
	d = NewDecbuf([]byte{1, 2, 3})
	d.Skip(2)
	d.FailAt(1, cause)
	require.ErrorIs(t, d.Err(), cause)
	require.EqualError(t, d.Err(), "corrupt data at offset 1: unknown marker")
}

// TestDecbufBytesCapacity checks that appending to a string read with
// UvarintBytes cannot overwrite what follows it.
func TestDecbufBytesCapacity(t *testing.T) {
	in := []byte{2, 'a', 'b', 'c'}
	d := NewDecbuf(in)
	b := d.UvarintBytes()
	_ = append(b, 'x')
	require.Equal(t, byte('c'), in[3])
}

// FuzzDecbuf runs a sequence of reads, chosen by script, over arbitrary
// bytes: no read panics or reads outside the input, offsets only grow,
// and once a read fails the error stays the same and every read returns
// zero values.
func FuzzDecbuf(f *testing.F) {
	f.Add([]byte{0xac, 0x02, 1, 2, 3, 4, 5, 6, 7, 8}, []byte{3, 2, 0})
	f.Add([]byte{0x80, 0x80}, []byte{6, 6, 0, 1})
	f.Add([]byte{3, 'a', 'b', 'c', 0xff}, []byte{6, 5, 4})
	f.Fuzz(func(t *testing.T, in, script []byte) {
		d := NewDecbuf(in)
		var first error
		prev := 0
		for _, s := range script {
			got, b := ops[int(s)%len(ops)].read(&d)
			if first != nil {
				require.False(t, d.Err() != first || got != 0 || b != nil || d.Len() != 0 || !d.Failed(),
					"read after error %v: got %d, %q, len %d, err %v", first, got, b, d.Len(), d.Err())
				continue
			}
			if err := d.Err(); err != nil {
				var ce *corrupt.Error
				placed := d.ErrIn("f", 7)
				require.False(t, !errors.As(placed, &ce) || !errors.Is(placed, corrupt.ErrCorrupt) || ce.File != "f" ||
					ce.Offset < 7 || ce.Offset > 7+int64(len(in)), "bad error %#v", placed)
				first = err
				continue
			}
			require.False(t, d.Offset() < prev || d.Offset() > len(in) || d.Len() != len(in)-d.Offset(),
				"offset %d after %d, len %d of %d", d.Offset(), prev, d.Len(), len(in))
			prev = d.Offset()
		}
	})
}

func BenchmarkDecbuf(b *testing.B) {
	var in []byte
	for i := range 1000 {
		in = binary.AppendUvarint(in, uint64(i)*977)
		in = binary.AppendVarint(in, -int64(i))
		in = binary.BigEndian.AppendUint64(in, uint64(i))
		in = binary.AppendUvarint(in, 5)
		in = append(in, "hello"...)
	}
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		d := NewDecbuf(in)
		var sum uint64
		for d.Len() > 0 {
			sum += d.Uvarint()
			sum += uint64(d.Varint())
			sum += d.Be64()
			sum += uint64(len(d.UvarintBytes()))
		}
		if d.Err() != nil || sum == 0 {
			b.Fatal(d.Err())
		}
	}
}
