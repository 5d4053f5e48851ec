package index

import (
	"io/fs"

	"github.com/cockroachdb/errors/oserror"
)

var errNotExist = fs.ErrNotExist

func isNotExist(err error) bool { return oserror.IsNotExist(err) }
