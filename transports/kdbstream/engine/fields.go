package engine

import (
	"encoding/binary"
	"errors"
)

// encodeFields packs flat field/value pairs into one column: a uvarint count, then each
// string as uvarint length + bytes. Binary safe (Redis values are byte strings, and JSON
// would mangle non-UTF-8 data) and order preserving, like a listpack entry.
func encodeFields(vals []string) []byte {
	n := binary.MaxVarintLen64
	for _, v := range vals {
		n += binary.MaxVarintLen64 + len(v)
	}
	b := make([]byte, 0, n)
	b = binary.AppendUvarint(b, uint64(len(vals)))
	for _, v := range vals {
		b = binary.AppendUvarint(b, uint64(len(v)))
		b = append(b, v...)
	}
	return b
}

var errCorruptFields = errors.New("kdbstream: corrupt fields column")

// decodeFields copies the column once into a single string and slices the values
// out of it: two allocations per entry instead of one per field (the read path's
// garbage), at the cost of the values sharing one backing array.
func decodeFields(b []byte) ([]string, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, errCorruptFields
	}
	all := string(b)
	pos := k
	out := make([]string, 0, n)
	for i := uint64(0); i < n; i++ {
		l, k := binary.Uvarint(b[pos:])
		if k <= 0 || uint64(len(b)-pos-k) < l {
			return nil, errCorruptFields
		}
		pos += k
		out = append(out, all[pos:pos+int(l)])
		pos += int(l)
	}
	return out, nil
}
