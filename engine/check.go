package engine

// Check validates r exactly as Append would, without storing anything. The
// CLI uses it to reject a whole input file before writing any of it.
func (db *DB) Check(r Record) error {
	return validateRecord(&r, &db.opts, "record")
}
