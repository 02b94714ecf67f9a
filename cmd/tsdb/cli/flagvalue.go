package cli

import (
	"fmt"
	"strconv"
)

// boolValue is a boolean flag that takes its value after '=' or as the
// next argument (--isolation=false, --isolation false), which kingpin's own
// boolean flags do not accept.
type boolValue struct{ p *bool }

// Set implements kingpin.Value.
func (b boolValue) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("want true or false, not %q", s)
	}
	*b.p = v
	return nil
}

// String implements kingpin.Value.
func (b boolValue) String() string { return strconv.FormatBool(*b.p) }
