package suite

import "errors"

// ErrConfig is wrapped by every Config.Validate error.
var ErrConfig = errors.New("lazymem: suite: invalid config")
