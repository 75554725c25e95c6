package nn

import "errors"

// SaveFile placeholder.
func SaveFile(path string, m Module, meta map[string]string) error { return errors.New("todo") }
