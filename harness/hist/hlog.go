package hist

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// The V2 encoding's cookies (HdrHistogram's wire format, as
// hdrhistogram-go's hdr_encoding.go writes them: the base | 0x10).
const (
	encodingCookie           int32 = 0x1c849303 | 0x10
	compressedEncodingCookie int32 = 0x1c849304 | 0x10
)

// LogWriter writes an HdrHistogram interval log (.hlog) in the format of
// hdrhistogram-go's HistogramLogWriter, which writes its header lines; the
// interval lines it writes itself. The library's encoder makes a new zlib
// writer at BestCompression for every histogram: 1.4 ms and 836 KB
// allocated a histogram (measured on this harness's range), about 14 ms a
// second of the collector's tick at ten tags, taken from the store under
// test on a small machine. This one reuses one zlib writer at BestSpeed;
// every HdrHistogram reader inflates either.
type LogWriter struct {
	*hdr.HistogramLogWriter
	w    io.Writer
	base int64 // ms, as SetBaseTime
	z    *zlib.Writer
	raw  bytes.Buffer // the uncompressed V2 payload
	comp bytes.Buffer // its deflated form
	out  bytes.Buffer // a whole interval line
}

// NewLogWriter writes to w.
func NewLogWriter(w io.Writer) *LogWriter {
	return &LogWriter{HistogramLogWriter: hdr.NewHistogramLogWriter(w), w: w}
}

// SetBaseTime sets the time (ms since the epoch) interval lines' start
// times count from.
func (lw *LogWriter) SetBaseTime(ms int64) {
	lw.base = ms
	lw.HistogramLogWriter.SetBaseTime(ms)
}

// OutputIntervalHistogram writes h as one interval line: its tag, start
// and length (seconds from the base time), max (ms) and V2 compressed
// encoding, as the library's writer does.
func (lw *LogWriter) OutputIntervalHistogram(h *hdr.Histogram) error {
	tag := h.Tag()
	if strings.ContainsAny(tag, ", \r\n") {
		return fmt.Errorf("hlog: tag %q has a comma, space or line break", tag)
	}
	payload, err := lw.encode(h)
	if err != nil {
		return err
	}
	start := float64(h.StartTimeMs()-lw.base) / 1000
	end := float64(h.EndTimeMs()-lw.base) / 1000
	b := &lw.out
	b.Reset()
	if tag != "" {
		b.WriteString("Tag=" + tag + ",")
	}
	for _, v := range []float64{start, end - start, float64(h.Max()) / hdr.MsToNsRatio} {
		b.Write(strconv.AppendFloat(b.AvailableBuffer(), v, 'f', 6, 64))
		b.WriteByte(',')
	}
	b.Write(payload)
	b.WriteByte('\n')
	_, err = lw.w.Write(b.Bytes())
	return err
}

// encode is h's V2 compressed encoding, base64 (hdrhistogram-go's
// EncodeV2): a header, the counts up to the max's index as ZigZag LEB128
// (a run of zeros as one negative count), deflated.
func (lw *LogWriter) encode(h *hdr.Histogram) ([]byte, error) {
	snap := h.Export()
	limit := 1
	for i := len(snap.Counts) - 1; i > 0; i-- {
		if snap.Counts[i] != 0 {
			limit = i + 1
			break
		}
	}
	var counts []byte
	for i := 0; i < limit; {
		c := snap.Counts[i]
		i++
		if c == 0 {
			zeros := int64(1)
			for i < limit && snap.Counts[i] == 0 {
				zeros++
				i++
			}
			if zeros > 1 {
				c = -zeros
			}
		}
		counts = appendZigZag(counts, c)
	}
	ratio := snap.IntegerToDoubleConversionRatio
	if ratio == 0 {
		ratio = 1
	}
	lw.raw.Reset()
	var hdrb [40]byte
	binary.BigEndian.PutUint32(hdrb[0:], uint32(encodingCookie))
	binary.BigEndian.PutUint32(hdrb[4:], uint32(len(counts)))
	binary.BigEndian.PutUint32(hdrb[8:], 0) // normalizing index offset: counts are not rotated
	binary.BigEndian.PutUint32(hdrb[12:], uint32(snap.SignificantFigures))
	binary.BigEndian.PutUint64(hdrb[16:], uint64(snap.LowestTrackableValue))
	binary.BigEndian.PutUint64(hdrb[24:], uint64(snap.HighestTrackableValue))
	binary.BigEndian.PutUint64(hdrb[32:], math.Float64bits(ratio))
	lw.raw.Write(hdrb[:])
	lw.raw.Write(counts)

	lw.comp.Reset()
	if lw.z == nil {
		z, err := zlib.NewWriterLevel(&lw.comp, zlib.BestSpeed)
		if err != nil {
			return nil, fmt.Errorf("hlog: %w", err)
		}
		lw.z = z
	} else {
		lw.z.Reset(&lw.comp)
	}
	if _, err := lw.z.Write(lw.raw.Bytes()); err != nil {
		return nil, fmt.Errorf("hlog: %w", err)
	}
	if err := lw.z.Close(); err != nil {
		return nil, fmt.Errorf("hlog: %w", err)
	}
	whole := make([]byte, 8+lw.comp.Len())
	binary.BigEndian.PutUint32(whole[0:], uint32(compressedEncodingCookie))
	binary.BigEndian.PutUint32(whole[4:], uint32(lw.comp.Len()))
	copy(whole[8:], lw.comp.Bytes())
	return base64.StdEncoding.AppendEncode(nil, whole), nil
}

// appendZigZag appends v as HdrHistogram's ZigZag LEB128-64b9B: seven bits
// a byte with a continuation bit, the ninth byte (if any) whole.
func appendZigZag(b []byte, v int64) []byte {
	u := uint64((v << 1) ^ (v >> 63))
	for range 8 {
		if u>>7 == 0 {
			return append(b, byte(u))
		}
		b = append(b, byte(u&0x7f|0x80))
		u >>= 7
	}
	return append(b, byte(u))
}
