package zipf

import "errors"

// ErrConfig reports an unusable Config; the wrapped message names the field.
var ErrConfig = errors.New("lazymem: zipf: bad config")
