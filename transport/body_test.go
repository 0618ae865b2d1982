package transport

import (
	"io"
	"strings"
	"testing"
)

// The terminal event is found even when a read splits it.
func TestStreamEndMarkAcrossReads(t *testing.T) {
	stream := "data: {\"x\":1}\n\ndata: [DONE]\n\n"
	{
		for _, chunk := range []int{1, 2, 3, 5, 7, 11, 64} {
			b := &body{rc: io.NopCloser(strings.NewReader(stream)), sse: true}
			buf := make([]byte, chunk)
			for i := 0; i < len(stream); {
				n, _ := b.Read(buf[:min(chunk, len(stream)-i)])
				if n == 0 {
					break
				}
				i += n
				if i < len(stream)-len("[DONE]\n\n")+1 && b.sawEnd {
					t.Fatalf("chunk %d: end seen at byte %d, before the mark", chunk, i)
				}
			}
			if !b.sawEnd {
				t.Fatalf("chunk %d: [DONE] not seen", chunk)
			}
		}
	}
}
