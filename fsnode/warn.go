package fsnode

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"gcfs/codec"
	"gcfs/discimg"
)

// DefaultLogBurst is how many lines of one kind a Limiter passes on before it
// only counts them.
const DefaultLogBurst = 8

// Limiter is the model's log sink: every line it passes on has its control
// characters escaped (EscapeControl), whatever its arguments carry (names
// and messages from the disc, rule strings from the index sidecar, paths).
//
// It summarises repeated log lines: of each kind of problem it passes
// on the first Burst lines, then counts the rest, and Flush writes one line
// per kind with the count of lines not shown. A kind is the line's format
// string, refined by the type (and, for a *discimg.FormatError, the reason
// with its numbers left out) of the error arguments, so that a million
// duplicate directory records are one kind and a directory loop another.
// Safe for concurrent use.
type Limiter struct {
	logf  func(format string, args ...any)
	burst int

	mu    sync.Mutex
	kinds map[string]*kindCount
	order []string // kinds in order of first sight, for Flush
}

type kindCount struct {
	shown, hidden int
	example       string // the last line shown, to name the kind in the summary
}

// NewLimiter passes up to burst lines of each kind on to logf (burst < 1:
// DefaultLogBurst).
func NewLimiter(logf func(format string, args ...any), burst int) *Limiter {
	if burst < 1 {
		burst = DefaultLogBurst
	}
	return &Limiter{logf: logf, burst: burst, kinds: map[string]*kindCount{}}
}

// Logf logs one line, or counts it when its kind has had its burst.
func (l *Limiter) Logf(format string, args ...any) {
	if l == nil || l.logf == nil {
		return
	}
	kind := logKind(format, args)
	l.mu.Lock()
	k := l.kinds[kind]
	if k == nil {
		k = &kindCount{}
		l.kinds[kind] = k
		l.order = append(l.order, kind)
	}
	show := k.shown < l.burst
	var line string
	if show {
		k.shown++
		line = EscapeControl(fmt.Sprintf(format, args...))
		k.example = line
	} else {
		k.hidden++
	}
	last := show && k.shown == l.burst
	l.mu.Unlock()
	if show {
		l.logf("%s", line)
	}
	if last {
		l.logf("(further problems like the one above are counted, not shown)")
	}
}

// Flush writes one line per kind with lines not shown since the last Flush:
// their count and the last line of that kind that was shown.
func (l *Limiter) Flush() {
	if l == nil || l.logf == nil {
		return
	}
	type sum struct {
		n       int
		example string
	}
	var out []sum
	l.mu.Lock()
	for _, kind := range l.order {
		k := l.kinds[kind]
		if k.hidden > 0 {
			out = append(out, sum{k.hidden, k.example})
			k.hidden = 0
		}
	}
	l.mu.Unlock()
	for _, s := range out {
		l.logf("%d more problems like this one not shown: %s", s.n, s.example)
	}
}

// logKind is the kind of a log line: its format and what its error
// arguments are.
func logKind(format string, args []any) string {
	var b strings.Builder
	b.WriteString(format)
	for _, a := range args {
		if err, ok := a.(error); ok {
			b.WriteString("|")
			b.WriteString(errKind(err))
		}
	}
	return b.String()
}

// errKind names the kind of an error without its numbers and paths.
func errKind(err error) string {
	var fe *discimg.FormatError
	var ce *codec.CorruptError
	switch {
	case errors.As(err, &fe):
		return "format:" + withoutDigits(fe.Reason)
	case errors.Is(err, ErrShortImage):
		return "short image"
	case errors.As(err, &ce):
		return "corrupt stream"
	}
	return fmt.Sprintf("%T", err)
}

func withoutDigits(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return -1
		}
		return r
	}, s)
}

// EscapeControl makes s safe to print as one line of a log or a terminal:
// every control character (C0, DEL, C1, and the other runes Go does not
// call printable: line and paragraph separators, bidirectional and other
// format characters) becomes its Go escape (\x1b, \n, \t, \u2028), and
// every byte that is not UTF-8 becomes \xNN. Printable text, backslashes
// included, is left as it is, so that a %q in a message stays readable.
// Every sink of log lines applies it to the whole line (the Limiter, the
// CLI's warnings, the mount's log), not each call site to its arguments.
func EscapeControl(s string) string {
	i := 0
	for i < len(s) && s[i] >= 0x20 && s[i] < 0x7f {
		i++
	}
	if i == len(s) {
		return s // plain ASCII: the common case, no copy
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, "\\x%02x", s[i])
		case r == ' ' || strconv.IsPrint(r):
			b.WriteString(s[i : i+n])
		default:
			q := strconv.QuoteRune(r) // '\x1b', '\n', '\u2028'
			b.WriteString(q[1 : len(q)-1])
		}
		i += n
	}
	return b.String()
}
