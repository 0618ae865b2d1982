package responses

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// stored is a Stored of owner with id and a response of about size bytes.
func stored(id, owner string, size int) Stored {
	resp := `{"id":"` + id + `","object":"response","pad":"` + strings.Repeat("x", size) + `"}`
	return Stored{
		ID: id, Owner: owner, Response: []byte(resp), Created: created,
		Input:  []Item{{Type: typeMessage, ID: "msg_in", Role: "user", Content: []Part{{Type: partInputText, Text: "q"}}}},
		Output: []Item{{Type: typeMessage, ID: "msg_out", Role: "assistant", Status: "completed", Content: []Part{{Type: partOutputText, Text: "a"}}}},
	}
}

// hexID is a valid id for n.
func hexID(n int) string { return "resp_" + strings.Repeat("0", 8) + itoaHex(n) }

func itoaHex(n int) string {
	const digits = "0123456789abcdef"
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 16 {
		b = append([]byte{digits[n%16]}, b...)
	}
	return string(b)
}

func TestValidID(t *testing.T) {
	good := []string{"resp_0", "resp_0123456789abcdef", NewID(), "resp_" + strings.Repeat("a", 128)}
	bad := []string{"", "resp_", "resp_ABC", "resp_xyz", "../resp_00", "resp_00/../x", "resp_00\x00",
		"resp_" + strings.Repeat("a", 129), "msg_00", "resp_0.json", "RESP_00", "resp_00 "}
	for _, id := range good {
		if !validID(id) {
			t.Errorf("validID(%q) = false", id)
		}
	}
	for _, id := range bad {
		if validID(id) {
			t.Errorf("validID(%q) = true", id)
		}
	}
	if a, b := NewID(), NewID(); a == b || len(a) != len("resp_")+48 {
		t.Errorf("NewID gave %q and %q", a, b)
	}
}

// stores returns a fresh store of each kind, bounded by maxBytes per
// owner.
func stores(t *testing.T, maxBytes int64) map[string]Store {
	d, err := NewDirStore(t.TempDir(), 0, maxBytes, 0)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]Store{"memory": NewMemoryStore(1000, maxBytes), "dir": d}
}

func TestStoreBasics(t *testing.T) {
	for name, s := range stores(t, 1<<20) {
		t.Run(name, func(t *testing.T) {
			in := stored(testID, "team-a", 10)
			if err := s.Put(in); err != nil {
				t.Fatal(err)
			}
			got, ok := s.Get("team-a", testID)
			if !ok || got.ID != in.ID || got.Owner != "team-a" || string(got.Response) != string(in.Response) ||
				!got.Created.Equal(in.Created) || len(got.Input) != 1 || got.Output[0].Content[0].Text != "a" {
				t.Fatalf("Get = %+v, %v", got, ok)
			}
			if _, ok := s.Get("team-a", "resp_ff"); ok {
				t.Error("Get of an unknown id found something")
			}
			if _, ok := s.Get("team-b", testID); ok {
				t.Error("another owner's Get found it")
			}
			if s.Delete("team-b", testID) {
				t.Error("another owner's Delete removed it")
			}
			if !s.Delete("team-a", testID) || s.Delete("team-a", testID) {
				t.Error("Delete did not report one removal")
			}
			if _, ok := s.Get("team-a", testID); ok {
				t.Error("Get after Delete found it")
			}
			if err := s.Put(stored("../../etc/passwd", "x", 1)); !errors.Is(err, ErrInvalidID) {
				t.Errorf("Put of a bad id: %v", err)
			}
			if err := s.Put(stored(hexID(1), "x", 2<<20)); !errors.Is(err, ErrTooLarge) {
				t.Errorf("Put of a response over the bound: %v", err)
			}
		})
	}
}

func TestStoreBoundsPerOwner(t *testing.T) {
	for name, s := range stores(t, 10_000) {
		t.Run(name, func(t *testing.T) {
			// b stores one response; a then stores many, each about 1 KB.
			if err := s.Put(stored(hexID(1000), "b", 1000)); err != nil {
				t.Fatal(err)
			}
			for i := range 50 {
				if err := s.Put(stored(hexID(i), "a", 1000)); err != nil {
					t.Fatal(err)
				}
			}
			if _, ok := s.Get("b", hexID(1000)); !ok {
				t.Error("another owner's response was pushed out")
			}
			if _, ok := s.Get("a", hexID(0)); ok {
				t.Error("a's oldest response is still there past its bound")
			}
			if _, ok := s.Get("a", hexID(49)); !ok {
				t.Error("a's newest response is gone")
			}
			kept := 0
			for i := range 50 {
				if _, ok := s.Get("a", hexID(i)); ok {
					kept++
				}
			}
			if kept < 3 || kept > 10 {
				t.Errorf("a keeps %d responses of about 1 KB under 10 KB", kept)
			}
		})
	}
}

func TestMemoryStoreEntryBound(t *testing.T) {
	s := NewMemoryStore(3, 0)
	for i := range 5 {
		s.Put(stored(hexID(i), "a", 1))
	}
	s.Get("a", hexID(2)) // used: the least recently used go first
	s.Put(stored(hexID(5), "a", 1))
	for i, want := range []bool{false, false, true, false, true, true} {
		if _, ok := s.Get("a", hexID(i)); ok != want {
			t.Errorf("response %d kept %v, want %v", i, ok, want)
		}
	}
}

func TestStoreConcurrent(t *testing.T) {
	for name, s := range stores(t, 200_000) {
		t.Run(name, func(t *testing.T) {
			var wg sync.WaitGroup
			for g := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					owner := string(rune('a' + g%3))
					for i := range 40 {
						id := hexID(i % 10)
						switch i % 4 {
						case 0, 1:
							if err := s.Put(stored(id, owner, 100)); err != nil {
								t.Error(err)
							}
						case 2:
							if st, ok := s.Get(owner, id); ok && (st.ID != id || st.Owner != owner) {
								t.Errorf("Get(%s) gave %s", id, st.ID)
							}
						case 3:
							s.Delete(owner, id)
						}
					}
				}()
			}
			wg.Wait()
		})
	}
}

func TestNewStoredAndHistory(t *testing.T) {
	_, req := chat(t, `{"model":"m","input":[{"role":"user","content":"q"},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"r"}]}`)
	resp, err := FromChat(chatBody(`{"role":"assistant","content":"done"}`, "stop"), req, testID, created)
	if err != nil {
		t.Fatal(err)
	}
	st, err := NewStored(req, resp, "team-a", created)
	if err != nil {
		t.Fatal(err)
	}
	if st.ID != testID || st.Owner != "team-a" || string(st.Response) != string(resp) {
		t.Fatalf("Stored = %+v", st)
	}
	wantIDs := []string{"msg_0123456789abcdef10000", "fc_0123456789abcdef10001", "fco_0123456789abcdef10002"}
	for i, it := range st.Input {
		if it.ID != wantIDs[i] || it.Status != "completed" {
			t.Errorf("input %d: id %q status %q, want %q completed", i, it.ID, it.Status, wantIDs[i])
		}
	}
	if req.Input[0].ID != "" {
		t.Error("NewStored changed the request's items")
	}
	if len(st.Output) != 1 || st.Output[0].ID != "msg_0123456789abcdef0000" || st.Output[0].Content[0].Text != "done" || st.Output[0].Role != "assistant" {
		t.Errorf("Output = %+v", st.Output)
	}
	h := st.History()
	if len(h) != 4 || h[3].Content[0].Text != "done" {
		t.Errorf("History = %+v", h)
	}
	if _, err := NewStored(req, []byte(`{"id":"../x","output":[]}`), "a", created); !errors.Is(err, ErrInvalidID) {
		t.Errorf("NewStored with a bad id: %v", err)
	}
	if _, err := NewStored(req, []byte(`nope`), "a", created); err == nil {
		t.Error("NewStored of no response: no error")
	}
}

func TestListInput(t *testing.T) {
	st := Stored{ID: testID}
	for i := range 5 {
		st.Input = append(st.Input, Item{Type: typeMessage, ID: "msg_" + itoa(i), Role: "user", Status: "completed", Content: []Part{{Type: partInputText, Text: itoa(i)}}})
	}
	tests := []struct {
		after       string
		limit       int
		order       string
		ids         []string
		first, last string
		more        bool
		errParam    string
	}{
		{"", 0, "", []string{"msg_4", "msg_3", "msg_2", "msg_1", "msg_0"}, "msg_4", "msg_0", false, ""},
		{"", 2, "asc", []string{"msg_0", "msg_1"}, "msg_0", "msg_1", true, ""},
		{"msg_1", 2, "asc", []string{"msg_2", "msg_3"}, "msg_2", "msg_3", true, ""},
		{"msg_3", 10, "desc", []string{"msg_2", "msg_1", "msg_0"}, "msg_2", "msg_0", false, ""},
		{"msg_0", 10, "desc", nil, "", "", false, ""},
		{"", 101, "", nil, "", "", false, "limit"},
		{"", -1, "", nil, "", "", false, "limit"},
		{"", 5, "random", nil, "", "", false, "order"},
		{"msg_9", 5, "", nil, "", "", false, "after"},
	}
	for _, tt := range tests {
		out, err := st.ListInput(tt.after, tt.limit, tt.order)
		if tt.errParam != "" {
			var e *Error
			if !errors.As(err, &e) || e.Param != tt.errParam {
				t.Errorf("ListInput(%q, %d, %q) error %v, want one about %s", tt.after, tt.limit, tt.order, err, tt.errParam)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		v := decode(t, out)
		var ids []string
		for _, it := range field(v, "data").([]any) {
			ids = append(ids, str(field(it, "id")))
		}
		if str(field(v, "object")) != "list" || !equalValues(ids, tt.ids) || str(field(v, "first_id")) != tt.first ||
			str(field(v, "last_id")) != tt.last || field(v, "has_more") != tt.more {
			t.Errorf("ListInput(%q, %d, %q) = %s", tt.after, tt.limit, tt.order, out)
		}
	}
	out, _ := st.ListInput("", 1, "asc")
	want := `{"object":"list","data":[{"type":"message","id":"msg_0","status":"completed","role":"user","content":[{"type":"input_text","text":"0"}]}],"first_id":"msg_0","last_id":"msg_0","has_more":true}`
	if string(out) != want {
		t.Errorf("ListInput:\n got %s\nwant %s", out, want)
	}
}

func TestDeleted(t *testing.T) {
	if got := string(Deleted(testID)); got != `{"id":"resp_0123456789abcdef","object":"response","deleted":true}` {
		t.Errorf("Deleted = %s", got)
	}
}

// Items written by appendItem read back the same.
func TestItemJSONRoundTrip(t *testing.T) {
	items := []Item{
		{Type: typeMessage, ID: "msg_1", Status: "completed", Role: "user", Content: []Part{
			{Type: partInputText, Text: "a\n\"b\""}, {Type: partInputImage, ImageURL: "https://x", Detail: "low"},
			{Type: partInputFile, FileData: "data:application/pdf;base64,AA", Filename: "f.pdf"}}},
		{Type: typeMessage, Role: "assistant", Content: []Part{{Type: partOutputText, Text: "t"}, {Type: partRefusal, Text: "r"}}},
		{Type: typeMessage, Role: "developer", Content: []Part{{Type: partInputText, Text: "d"}}},
		{Type: typeCall, ID: "fc_1", CallID: "c", Name: "n", Arguments: `{"x":1}`, Status: "incomplete"},
		{Type: typeCallOutput, CallID: "c", Output: "out"},
		{Type: typeCallOutput, CallID: "c", Content: []Part{{Type: partInputText, Text: "p"}}},
	}
	for _, it := range items {
		b := appendItem(nil, &it)
		back, keep, err := parseItem(b)
		if err != nil || !keep || !equalItems(back, it) {
			t.Errorf("item %+v\nwrote %s\nread back %+v (%v)", it, b, back, err)
		}
	}
}

func equalItems(a, b Item) bool {
	return mustJSON(a) == mustJSON(b)
}

var _ = time.Second

// A DirStore bounds each owner's entries as well as its bytes: a client
// storing many small responses keeps its newest maxEntries, and another
// client's are untouched.
func TestDirStoreEntryBound(t *testing.T) {
	s, err := NewDirStore(t.TempDir(), 3, 1<<20, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(stored(hexID(100), "b", 1)); err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		if err := s.Put(stored(hexID(i), "a", 1)); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range []bool{false, false, false, true, true, true} {
		if _, ok := s.Get("a", hexID(i)); ok != want {
			t.Errorf("response %d kept %v, want %v", i, ok, want)
		}
	}
	if _, ok := s.Get("b", hexID(100)); !ok {
		t.Error("another owner's response went")
	}
}
