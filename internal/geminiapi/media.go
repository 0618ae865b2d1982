package geminiapi

import (
	"strconv"
	"strings"

	"github.com/fuseboxhq/fusebox/aireq"
)

// The members of a Blob (inlineData) and of FileData.
var (
	blobFields = newFields("Blob", "mimeType", "data", "displayName")
	fileFields = newFields("FileData", "mimeType", "fileUri", "displayName")
)

// appendInline appends the Blob raw, after n parts, as a chat part: an
// image as an image_url with a data: URL, a PDF as a file part, WAV and
// MP3 audio as input_audio. Other types are refused.
func appendInline(b []byte, n int, raw []byte) ([]byte, error) {
	var mime string
	var data []byte
	err := eachMember(raw, blobFields, func(i int, v []byte) error {
		var err error
		switch i {
		case 0:
			mime, err = readString(v)
		case 1:
			if v[0] != '"' {
				return badValue("data", "TYPE_BYTES", v)
			}
			data = v
		case 2:
			_, err = readString(v)
		}
		return under(err, blobFields.snake[i])
	})
	switch {
	case err != nil:
		return b, under(err, "inline_data")
	case mime == "":
		return b, rule("inline_data.mime_type", "the MIME type is required")
	case data == nil:
		return b, rule("inline_data.data", "the data is required")
	case !validMime(mime):
		return b, badValue("inline_data.mime_type", "TYPE_STRING", []byte(strconv.Quote(mime)))
	}
	mime = strings.ToLower(mime)
	var pre, post string
	switch {
	case strings.HasPrefix(mime, "image/"):
		pre, post = `{"type":"image_url","image_url":{"url":"data:`+mime+`;base64,`, `"}}`
	case mime == "application/pdf":
		pre, post = `{"type":"file","file":{"filename":"document.pdf","file_data":"data:application/pdf;base64,`, `"}}`
	case mime == "audio/wav" || mime == "audio/x-wav" || mime == "audio/wave":
		pre, post = `{"type":"input_audio","input_audio":{"data":"`, `","format":"wav"}}`
	case mime == "audio/mp3" || mime == "audio/mpeg":
		pre, post = `{"type":"input_audio","input_audio":{"data":"`, `","format":"mp3"}}`
	default:
		return b, unsupported("inline_data.mime_type", "inline data of type "+strconv.Quote(clip(mime)))
	}
	start := len(b)
	if n > 0 {
		b = append(b, ',')
	}
	b = append(b, pre...)
	b, ok := appendBase64(b, data)
	if !ok {
		return b[:start], badValue("inline_data.data", "TYPE_BYTES", []byte(`"…"`))
	}
	return append(b, post...), nil
}

// validMime reports whether s looks like a MIME type: type/subtype in
// the characters RFC 6838 allows, so that it can go into a data: URL.
func validMime(s string) bool {
	slash := strings.IndexByte(s, '/')
	if slash <= 0 || slash == len(s)-1 || len(s) > 127 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$&^_.+-", c) >= 0:
		case c == '/' && i == slash:
		default:
			return false
		}
	}
	return true
}

// appendBase64 appends the base64 text of the JSON string raw in the
// standard alphabet, padded, as a data: URL wants it: protobuf JSON takes
// the URL-safe alphabet and missing padding too. ok is false when raw is
// not base64.
func appendBase64(b, raw []byte) ([]byte, bool) {
	s := raw[1 : len(raw)-1]
	for _, c := range s {
		if c == '\\' { // escaped, "\/" say: decode first
			r := aireq.NewReader(raw)
			t, _ := r.ReadString()
			s = t.Bytes(nil)
			break
		}
	}
	n := 0
	for i, c := range s {
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '+', c == '/':
		case c == '-':
			c = '+'
		case c == '_':
			c = '/'
		case c == '=':
			if !padding(s[i:]) {
				return b, false
			}
			return append(b, s[i:]...), (n+len(s)-i)%4 == 0
		default:
			return b, false
		}
		b = append(b, c)
		n++
	}
	switch n % 4 {
	case 1:
		return b, false
	case 2:
		b = append(b, "=="...)
	case 3:
		b = append(b, '=')
	}
	return b, true
}

// padding reports whether s is base64 padding: one or two '='.
func padding(s []byte) bool { return string(s) == "=" || string(s) == "==" }

// appendFile appends the FileData raw, after n parts, as an image_url
// part with its URI: chat targets take files by URL only as images.
func appendFile(b []byte, n int, raw []byte) ([]byte, error) {
	var mime string
	var uri []byte
	err := eachMember(raw, fileFields, func(i int, v []byte) error {
		var err error
		switch i {
		case 1:
			if v[0] != '"' {
				return badValue("file_uri", "TYPE_STRING", v)
			}
			uri = v
		default:
			var s string
			s, err = readString(v)
			if i == 0 {
				mime = s
			}
		}
		return under(err, fileFields.snake[i])
	})
	switch {
	case err != nil:
		return b, under(err, "file_data")
	case uri == nil || len(uri) == 2:
		return b, rule("file_data.file_uri", "the file URI is required")
	case mime != "" && !strings.HasPrefix(strings.ToLower(mime), "image/"):
		return b, unsupported("file_data.mime_type", "a file of type "+strconv.Quote(clip(mime))+" by URI")
	}
	if n > 0 {
		b = append(b, ',')
	}
	b = append(b, `{"type":"image_url","image_url":{"url":`...)
	b = appendRawString(b, uri)
	return append(b, "}}"...), nil
}
