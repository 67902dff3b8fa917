package main

import (
	"fmt"
	"strings"
)

// mountOption is one option of a mount(8) option string: "key" or
// "key=value" (hasValue tells "key=" from "key").
type mountOption struct {
	key, value string
	hasValue   bool
}

// String writes the option back in the form splitMountOptions reads, quoting
// a value that holds a comma.
func (o mountOption) String() string {
	key := o.key
	if strings.ContainsAny(key, ",=") {
		key = `"` + key + `"`
	}
	if !o.hasValue {
		return key
	}
	if strings.Contains(o.value, ",") {
		return key + `="` + o.value + `"`
	}
	return key + "=" + o.value
}

// splitMountOptions splits an option string the way mount(8) does (libmount's
// option parser): options are separated by commas; a double quote opens or
// closes a quoted stretch, inside which a comma belongs to the value
// (log_file="/x/q,uoted.log"); the key ends at the first "=" outside quotes.
// The quotes themselves are not part of the value: libmount leaves them in
// the string it hands a helper, and the value is what they enclose. Empty
// options (",,", a trailing comma) are skipped, as libmount skips them.
//
// libmount gives a backslash no meaning: mount(8) splits "a\,b" into "a\" and
// "b" before a helper sees it. Reading it as an escape here would make
// `gcfs mount -o` and an fstab line disagree, so a backslash before a comma
// is refused, saying how to quote instead. An unclosed quote is refused too.
func splitMountOptions(s string) ([]mountOption, error) {
	var out []mountOption
	start, inQuote := 0, false
	for i := 0; i <= len(s); i++ {
		if i < len(s) {
			switch s[i] {
			case '"':
				inQuote = !inQuote
				continue
			case ',':
				if inQuote {
					continue
				}
			default:
				continue
			}
		} else if inQuote {
			return nil, fmt.Errorf("-o %q: a double quote is not closed", s)
		}
		opt := s[start:i]
		start = i + 1
		if i < len(s) && strings.HasSuffix(opt, `\`) {
			return nil, fmt.Errorf(`-o %q: a backslash does not escape a comma in mount options; quote the value instead, as in log_file="/x/q,uoted.log"`, s)
		}
		o := parseMountOption(opt)
		if o.key == "" {
			if !o.hasValue {
				continue // "", `""`
			}
			return nil, fmt.Errorf("-o %q: an option with a value has no name", s)
		}
		out = append(out, o)
	}
	return out, nil
}

// parseMountOption splits one option at its first "=" outside quotes and
// drops the quotes. Leading and trailing blanks of the key are trimmed
// (", ro" is ro); the value is kept as written.
func parseMountOption(opt string) mountOption {
	inQuote := false
	for i := 0; i < len(opt); i++ {
		switch {
		case opt[i] == '"':
			inQuote = !inQuote
		case opt[i] == '=' && !inQuote && i > 0:
			return mountOption{key: strings.TrimSpace(unquote(opt[:i])), value: unquote(opt[i+1:]), hasValue: true}
		}
	}
	return mountOption{key: strings.TrimSpace(unquote(opt))}
}

func unquote(s string) string { return strings.ReplaceAll(s, `"`, "") }
