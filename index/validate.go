package index

import (
	"fmt"
	"strings"
)

// ReservedKeyPrefix starts the field keys the index keeps for a record's
// fixed attributes (agent, session, role). A metadata key may not start with
// it, so a caller's field can never be read as one of those attributes.
//
// This is the index's one rule about what a Doc may hold beyond its id
// order; callers above (the engine's record validation) check it through
// CheckMetaKey so that every layer accepts exactly the same records.
const ReservedKeyPrefix = "\x00"

// MetaKeyOK reports whether key may name a metadata field of a Doc. It is
// the allocation-free form of CheckMetaKey.
func MetaKeyOK(key string) bool {
	return key != "" && !strings.HasPrefix(key, ReservedKeyPrefix)
}

// CheckMetaKey returns nil if key may name a metadata field of a Doc, else an
// error wrapping ErrReservedKey (or ErrEmptyKey) that quotes the key.
func CheckMetaKey(key string) error {
	switch {
	case key == "":
		return ErrEmptyKey
	case strings.HasPrefix(key, ReservedKeyPrefix):
		return fmt.Errorf("%w: %q", ErrReservedKey, key)
	}
	return nil
}
