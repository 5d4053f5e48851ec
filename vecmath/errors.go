package vecmath

import "errors"

// ErrDimension reports vectors whose lengths do not agree with the dimension
// a batch call was given. Errors returned by DotBatch wrap it with the sizes.
var ErrDimension = errors.New("lazymem: vecmath: dimension mismatch")
