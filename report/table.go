package report

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// columnGap separates columns; two spaces keep adjacent right- and
// left-aligned columns from reading as one value.
const columnGap = "  "

// Table renders a plain-text table: the header, a separator of dashes, then
// the rows, each column padded to its widest cell. A column whose cells are
// all numbers (ignoring blanks and "-", "n/a") is right-aligned, header
// included, so digits line up; others are left-aligned. A number may carry
// a short unit suffix ("12.5ms", "3x", "99%", "1.2 KiB") and thousands
// separators. Rows shorter than the header are padded with blanks; a row
// longer than the header is an error. Widths count runes, so "µs" is two
// columns wide.
func Table(w io.Writer, header []string, rows [][]string) error {
	if len(header) == 0 {
		return errors.New("report: table has no header")
	}
	ncol := len(header)
	for i, r := range rows {
		if len(r) > ncol {
			return fmt.Errorf("report: table row %d has %d cells, header has %d", i, len(r), ncol)
		}
	}
	cell := func(r []string, c int) string {
		if c < len(r) {
			return clean(r[c])
		}
		return ""
	}

	width := make([]int, ncol)
	right := make([]bool, ncol)
	for c := range ncol {
		width[c] = utf8.RuneCountInString(clean(header[c]))
		sawNumber, allNumeric := false, true
		for _, r := range rows {
			v := cell(r, c)
			width[c] = max(width[c], utf8.RuneCountInString(v))
			switch {
			case isPlaceholder(v):
			case isNumeric(v):
				sawNumber = true
			default:
				allNumeric = false
			}
		}
		right[c] = sawNumber && allNumeric
	}

	var b strings.Builder
	writeRow := func(get func(c int) string) {
		var line strings.Builder
		for c := range ncol {
			if c > 0 {
				line.WriteString(columnGap)
			}
			v := get(c)
			pad := strings.Repeat(" ", width[c]-utf8.RuneCountInString(v))
			if right[c] {
				line.WriteString(pad + v)
			} else {
				line.WriteString(v + pad)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteByte('\n')
	}
	writeRow(func(c int) string { return clean(header[c]) })
	writeRow(func(c int) string { return strings.Repeat("-", width[c]) })
	for _, r := range rows {
		writeRow(func(c int) string { return cell(r, c) })
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("report: write table: %w", err)
	}
	return nil
}

// clean keeps a cell on one line: a newline or tab inside a cell would
// break every column after it.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, strings.TrimSpace(s))
}

// isPlaceholder reports cells that stand for a missing number and so should
// not make a numeric column left-aligned.
func isPlaceholder(s string) bool {
	switch strings.ToLower(s) {
	case "", "-", "—", "n/a", "na", "?":
		return true
	}
	return false
}

// isNumeric reports whether s is a number, optionally with a sign, thousands
// separators, a leading "~", "<" or ">" and a unit suffix of up to 6 runes
// ("ms", "µs", "%", "x", "/s", " KiB"). NaN and ±Inf count as numbers.
func isNumeric(s string) bool {
	s = strings.TrimLeft(s, "~≈<>")
	switch strings.ToLower(strings.TrimLeft(s, "+-")) {
	case "nan", "inf", "infinity":
		return true
	}
	// Longest numeric prefix: sign, digits, separators, point, exponent.
	end, digits := 0, 0
	for i, r := range s {
		switch {
		case unicode.IsDigit(r):
			digits++
		case r == '+' || r == '-':
			if i != 0 && s[i-1] != 'e' && s[i-1] != 'E' {
				goto done
			}
		case r == '.' || r == ',' || r == '_':
		case (r == 'e' || r == 'E') && digits > 0 && i+1 < len(s) && strings.ContainsRune("+-0123456789", rune(s[i+1])):
		default:
			goto done
		}
		end = i + utf8.RuneLen(r)
	}
done:
	if digits == 0 {
		return false
	}
	num := strings.NewReplacer(",", "", "_", "").Replace(s[:end])
	if _, err := strconv.ParseFloat(num, 64); err != nil {
		return false
	}
	unit := strings.TrimSpace(s[end:])
	if utf8.RuneCountInString(unit) > 6 {
		return false
	}
	for _, r := range unit {
		if !unicode.IsLetter(r) && r != '%' && r != '/' && r != 'µ' {
			return false
		}
	}
	return true
}
