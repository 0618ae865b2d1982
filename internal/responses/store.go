package responses

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"
	"time"

	"github.com/fuseboxhq/fusebox/aireq"
)

// idPrefix starts every response id.
const idPrefix = "resp_"

// maxIDHex is the most hex digits an id may have after its prefix.
const maxIDHex = 128

// NewID returns a new response id: "resp_" and 48 random hex digits.
func NewID() string {
	var b [24]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return idPrefix + hex.EncodeToString(b[:])
}

// validID reports whether id is "resp_" and 1 to maxIDHex lowercase hex
// digits: the only ids the stores take, so that no id a client sends can
// name another path, or the same file spelt differently on a
// case-insensitive file system.
func validID(id string) bool {
	rest, ok := cutPrefix(id, idPrefix)
	if !ok || len(rest) == 0 || len(rest) > maxIDHex {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func cutPrefix(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || s[:len(prefix)] != prefix {
		return s, false
	}
	return s[len(prefix):], true
}

// Errors of a Store's Put.
var (
	// ErrInvalidID: the id is not "resp_" and lowercase hex digits.
	ErrInvalidID = errors.New("responses: invalid response id")
	// ErrTooLarge: the response alone is over the store's byte bound.
	ErrTooLarge = errors.New("responses: the response is larger than the store's bound")
)

// A Store keeps responses made with store: true, for
// previous_response_id, GET /v1/responses/{id} (and its input_items) and
// DELETE /v1/responses/{id}. Get and Delete are asked for an owner's
// response (the client key's name) and find nothing of another owner's,
// so that a client cannot even learn that an id exists (404, and
// previous_response_not_found); they find nothing for an id that is not
// valid either. The owner is part of the question, not only of the
// answer, so that a store may keep each owner's responses together (the
// fleet's keeps them in one Redis Cluster slot, where one script bounds
// them). Implementations are safe for concurrent use.
type Store interface {
	Get(owner, id string) (Stored, bool)
	Put(Stored) error
	Delete(owner, id string) bool
}

// Stored is a stored response. Its slices are shared: neither the store
// nor its callers change them after Put.
type Stored struct {
	ID       string    // "resp_…"
	Owner    string    // the name of the client key that made it: only it may read it
	Response []byte    // the response object, as answered
	Input    []Item    // what the model was given: the history, then the request's input
	Output   []Item    // the response's output items
	Created  time.Time // when the response was created; a DirStore's ttl counts from it
}

// NewStored makes the Stored for response, a response object that FromChat
// or a Stream wrote for req, made for owner at created: its id and output
// items are read from response, and its input items are req.Input, each
// without an id given one (and status completed).
func NewStored(req Request, response []byte, owner string, created time.Time) (Stored, error) {
	s := Stored{Owner: owner, Response: response, Created: created}
	var id, out []byte
	if !topMembers(response, func(name []byte, _ aireq.Text, v []byte) {
		switch string(name) {
		case "id":
			id = v
		case "output":
			out = v
		}
	}) {
		return Stored{}, errors.New("responses: not a response object")
	}
	s.ID, _ = readString("", id)
	if !validID(s.ID) {
		return Stored{}, ErrInvalidID
	}
	err := elements(orEmpty(out), func(_ int, el []byte) error {
		it, keep, err := parseItem(el)
		if keep {
			s.Output = append(s.Output, it)
		}
		return err
	})
	if err != nil {
		return Stored{}, err
	}
	s.Input = make([]Item, len(req.Input))
	for i, it := range req.Input {
		if it.ID == "" {
			it.ID = itemID(inputIDPrefix(it.Type), s.ID, 0x10000+i)
		}
		if it.Status == "" {
			it.Status = statusCompleted
		}
		s.Input[i] = it
	}
	return s, nil
}

// inputIDPrefix is the id prefix of an input item of type typ.
func inputIDPrefix(typ string) string {
	switch typ {
	case typeCall:
		return "fc_"
	case typeCallOutput:
		return "fco_"
	}
	return "msg_"
}

// History returns the conversation up to and including s: its input
// items, then its output items. It is what ToChat takes for a request
// whose previous_response_id is s.ID.
func (s Stored) History() []Item {
	h := make([]Item, 0, len(s.Input)+len(s.Output))
	return append(append(h, s.Input...), s.Output...)
}

// ListInput writes the list object of GET
// /v1/responses/{id}/input_items: the input items in order ("asc") or
// newest first ("desc", also for ""), starting after the item with id
// after (if not empty), at most limit of them (1 to 100; 0 means 20). Bad
// parameters give an *Error naming the query parameter.
func (s Stored) ListInput(after string, limit int, order string) ([]byte, error) {
	switch {
	case limit == 0:
		limit = 20
	case limit < 1 || limit > 100:
		return nil, invalid("limit", "want 1 to 100, got "+strconv.Itoa(limit))
	}
	desc := true
	switch order {
	case "", "desc":
	case "asc":
		desc = false
	default:
		return nil, invalid("order", `want "asc" or "desc", got `+quote(order))
	}
	n := len(s.Input)
	at := func(i int) *Item { // the i-th item in the order asked for
		if desc {
			return &s.Input[n-1-i]
		}
		return &s.Input[i]
	}
	start := 0
	if after != "" {
		start = -1
		for i := 0; i < n; i++ {
			if at(i).ID == after {
				start = i + 1
				break
			}
		}
		if start < 0 {
			return nil, invalid("after", "no input item has the id "+quote(after))
		}
	}
	end := min(start+limit, n)
	b := append(make([]byte, 0, 256), `{"object":"list","data":[`...)
	for i := start; i < end; i++ {
		if i > start {
			b = append(b, ',')
		}
		b = appendItem(b, at(i))
	}
	b = append(b, ']')
	first, last := "", ""
	if end > start {
		first, last = at(start).ID, at(end-1).ID
	}
	b = appendStringOrNull(b, "first_id", first)
	b = appendStringOrNull(b, "last_id", last)
	b = appendBool(b, "has_more", end < n)
	return append(b, '}'), nil
}

// Deleted is the answer of DELETE /v1/responses/{id}.
func Deleted(id string) []byte {
	b := appendStringMember(append(make([]byte, 0, 96), '{'), "id", id)
	return append(b, `,"object":"response","deleted":true}`...)
}

// appendItem appends an item in the Responses API's shape, which
// parseItem reads back.
func appendItem(b []byte, it *Item) []byte {
	b = appendStringMember(append(b, '{'), "type", it.Type)
	if it.ID != "" {
		b = appendStringMember(b, "id", it.ID)
	}
	if it.Status != "" {
		b = appendStringMember(b, "status", it.Status)
	}
	switch it.Type {
	case typeMessage:
		b = appendStringMember(b, "role", it.Role)
		b = appendParts(appendKey(b, "content"), it.Content)
	case typeCall:
		b = appendStringMember(b, "call_id", it.CallID)
		b = appendStringMember(b, "name", it.Name)
		b = appendStringMember(b, "arguments", it.Arguments)
	case typeCallOutput:
		b = appendStringMember(b, "call_id", it.CallID)
		b = appendKey(b, "output")
		if it.Content != nil {
			b = appendParts(b, it.Content)
		} else {
			b = appendString(b, it.Output)
		}
	}
	return append(b, '}')
}

func appendParts(b []byte, parts []Part) []byte {
	b = append(b, '[')
	for i := range parts {
		if i > 0 {
			b = append(b, ',')
		}
		p := &parts[i]
		b = appendStringMember(append(b, '{'), "type", p.Type)
		switch p.Type {
		case partRefusal:
			b = appendStringMember(b, "refusal", p.Text)
		case partOutputText:
			b = appendStringMember(b, "text", p.Text)
			b = append(b, `,"annotations":[]`...)
		case partInputImage:
			b = appendStringMember(b, "image_url", p.ImageURL)
			if p.Detail != "" {
				b = appendStringMember(b, "detail", p.Detail)
			}
		case partInputFile:
			b = appendStringMember(b, "file_data", p.FileData)
			if p.Filename != "" {
				b = appendStringMember(b, "filename", p.Filename)
			}
		default:
			b = appendStringMember(b, "text", p.Text)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// size estimates the memory a Stored holds.
func (s *Stored) size() int64 {
	n := int64(len(s.ID) + len(s.Owner) + len(s.Response) + 64)
	for _, items := range [2][]Item{s.Input, s.Output} {
		for i := range items {
			n += items[i].size()
		}
	}
	return n
}

func (it *Item) size() int64 {
	n := int64(len(it.Type) + len(it.ID) + len(it.Status) + len(it.Role) + len(it.CallID) +
		len(it.Name) + len(it.Arguments) + len(it.Output) + 160)
	for i := range it.Content {
		p := &it.Content[i]
		n += int64(len(p.Type) + len(p.Text) + len(p.ImageURL) + len(p.Detail) + len(p.FileData) + len(p.Filename) + 96)
	}
	return n
}

// ValidID reports whether id is one a store takes ("resp_" and lowercase
// hex), for stores kept elsewhere.
func ValidID(id string) bool { return validID(id) }

// Encode returns s as a DirStore writes it to its file, for stores kept
// elsewhere (the fleet's, in Redis): compact JSON whose items are in the
// API's shape and whose response object is kept as it is, so a response
// costs little more than its own bytes. It fails for a response that is
// not a JSON object.
func (s Stored) Encode() ([]byte, error) { return encodeStored(&s) }

// DecodeStored reads what Encode wrote.
func DecodeStored(data []byte) (Stored, error) { return decodeStored(data) }
