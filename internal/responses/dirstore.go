package responses

import (
	"container/list"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fuseboxhq/fusebox/aireq"
	"github.com/fuseboxhq/fusebox/clock"
)

// DefaultDirMaxBytes is a DirStore's byte bound per owner when none is
// given.
const DefaultDirMaxBytes = 256 << 20

// DirStore is a Store on disk: one file per response in a directory,
// "<id>.json", so responses survive a restart. A file is written to a
// temporary file in the same directory, synced, and renamed into place
// (then the directory synced), so a crash leaves the old file or the new
// one, never a part. Ids are checked ("resp_" and lowercase hex digits)
// before they name a file, so no id can reach outside the directory.
//
// Like MemoryStore it is bounded per owner (client key): each owner keeps
// at most maxEntries files of maxBytes in all, and a Put past either
// removes that owner's oldest responses. Responses older than ttl are gone: Get does not find
// them, and a Put removes them. The index (owner, size, time of each file)
// is in memory, read from the files when the store is opened; a response
// is read from its file at each Get. It is safe for concurrent use.
type DirStore struct {
	// Clock tells the time that ttl is measured on; nil means the system
	// clock. Set it before the store is used.
	Clock clock.Clock

	dir        string
	maxEntries int
	maxBytes   int64
	ttl        time.Duration

	// mu guards the index below, and orders the renames and removals of
	// files with it.
	mu     sync.Mutex
	files  map[string]*dirEntry
	owners map[string]*dirOwner
	all    list.List // every entry, oldest first, for expiry
}

// dirOwner is an owner's entries, oldest first, and their bytes.
type dirOwner struct {
	entries list.List
	bytes   int64
}

// dirEntry is one file of the index.
type dirEntry struct {
	id, owner string
	size      int64
	created   time.Time
	inOwner   *list.Element
	inAll     *list.Element
}

// dirTemp starts the names of temporary files; no id does.
const dirTemp = ".tmp-"

// NewDirStore opens (creating it if need be) a DirStore in dir, whose
// owners may each keep maxEntries responses (≤ 0: DefaultMaxEntries) of
// maxBytes (≤ 0: DefaultDirMaxBytes) for ttl (≤ 0: no expiry; the bounds
// still apply). Files of the store
// found in dir are indexed; temporary files left by a crash, and files
// that cannot be read, are removed; other files are left alone.
func NewDirStore(dir string, maxEntries int, maxBytes int64, ttl time.Duration) (*DirStore, error) {
	if maxEntries <= 0 {
		maxEntries = DefaultMaxEntries
	}
	if maxBytes <= 0 {
		maxBytes = DefaultDirMaxBytes
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("responses: store directory: %w", err)
	}
	s := &DirStore{dir: dir, maxEntries: maxEntries, maxBytes: maxBytes, ttl: ttl, files: map[string]*dirEntry{}, owners: map[string]*dirOwner{}}
	if err := s.load(); err != nil {
		return nil, err
	}
	return s, nil
}

// load indexes the files in the directory, oldest first.
func (s *DirStore) load() error {
	names, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("responses: store directory: %w", err)
	}
	var found []*dirEntry
	for _, de := range names {
		name := de.Name()
		if strings.HasPrefix(name, dirTemp) {
			os.Remove(filepath.Join(s.dir, name))
			continue
		}
		id, ok := strings.CutSuffix(name, ".json")
		if !ok || !validID(id) || !de.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(s.dir, name))
		if err != nil {
			continue
		}
		st, err := decodeStored(data)
		if err != nil || st.ID != id {
			os.Remove(filepath.Join(s.dir, name))
			continue
		}
		found = append(found, &dirEntry{id: id, owner: st.Owner, size: int64(len(data)), created: st.Created})
	}
	slices.SortStableFunc(found, func(a, b *dirEntry) int { return a.created.Compare(b.created) })
	for _, e := range found {
		s.addLocked(e)
		s.trimLocked(e.owner)
	}
	return nil
}

// path is the file of a valid id.
func (s *DirStore) path(id string) string { return filepath.Join(s.dir, id+".json") }

// Get reads owner's response id from its file; false if there is none,
// it is another owner's, it has expired, or its file cannot be read.
func (s *DirStore) Get(owner, id string) (Stored, bool) {
	if !validID(id) {
		return Stored{}, false
	}
	now := clock.Or(s.Clock).Now()
	s.mu.Lock()
	e, ok := s.files[id]
	if ok && s.expired(e, now) {
		s.removeLocked(e)
		ok = false
	}
	s.mu.Unlock()
	if !ok || e.owner != owner {
		return Stored{}, false
	}
	// Outside the lock: a Delete meanwhile makes the read fail (not
	// found), a Put meanwhile is read whole (renames are atomic).
	data, err := os.ReadFile(s.path(id))
	if err != nil {
		return Stored{}, false
	}
	st, err := decodeStored(data)
	if err != nil || st.ID != id || st.Owner != owner {
		return Stored{}, false
	}
	return st, true
}

// Put writes st to its file, replacing a response of that id, then
// removes expired responses and the owner's oldest past its bound. It
// returns ErrInvalidID or ErrTooLarge, writing nothing, for an id that is
// not valid or a response over the bound alone, and the file system's
// error if the write fails.
func (s *DirStore) Put(st Stored) error {
	if !validID(st.ID) {
		return ErrInvalidID
	}
	data, err := encodeStored(&st)
	if err != nil {
		return err
	}
	if int64(len(data)) > s.maxBytes {
		return ErrTooLarge
	}
	tmp, err := s.writeTemp(data)
	if err != nil {
		return err
	}
	now := clock.Or(s.Clock).Now()
	s.mu.Lock()
	if err := os.Rename(tmp, s.path(st.ID)); err != nil {
		s.mu.Unlock()
		os.Remove(tmp)
		return fmt.Errorf("responses: store: %w", err)
	}
	if old, ok := s.files[st.ID]; ok {
		s.forgetLocked(old) // its file was just replaced
	}
	e := &dirEntry{id: st.ID, owner: st.Owner, size: int64(len(data)), created: st.Created}
	s.addLocked(e)
	s.trimLocked(st.Owner)
	s.expireLocked(now)
	s.mu.Unlock()
	return s.syncDir()
}

// Delete removes owner's response id and reports whether there was one.
func (s *DirStore) Delete(owner, id string) bool {
	if !validID(id) {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.files[id]
	if ok = ok && e.owner == owner; ok {
		s.removeLocked(e)
	}
	return ok
}

// writeTemp writes data to a new temporary file in the directory, synced,
// and returns its path.
func (s *DirStore) writeTemp(data []byte) (string, error) {
	f, err := os.CreateTemp(s.dir, dirTemp+"*")
	if err != nil {
		return "", fmt.Errorf("responses: store: %w", err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("responses: store: %w", err)
	}
	return f.Name(), nil
}

// syncDir makes the directory's entries (a rename) durable.
func (s *DirStore) syncDir() error {
	d, err := os.Open(s.dir)
	if err != nil {
		return fmt.Errorf("responses: store: %w", err)
	}
	err = d.Sync()
	d.Close()
	if err != nil && !errors.Is(err, os.ErrInvalid) { // some systems cannot sync a directory
		return fmt.Errorf("responses: store: %w", err)
	}
	return nil
}

func (s *DirStore) expired(e *dirEntry, now time.Time) bool {
	return s.ttl > 0 && now.Sub(e.created) >= s.ttl
}

// addLocked indexes e as the newest entry. Requires s.mu held.
func (s *DirStore) addLocked(e *dirEntry) {
	own := s.owners[e.owner]
	if own == nil {
		own = &dirOwner{}
		s.owners[e.owner] = own
	}
	e.inOwner = own.entries.PushBack(e)
	own.bytes += e.size
	e.inAll = s.all.PushBack(e)
	s.files[e.id] = e
}

// trimLocked removes owner's oldest entries while its files exceed the
// bounds. Requires s.mu held.
func (s *DirStore) trimLocked(owner string) {
	for own := s.owners[owner]; own != nil && (own.bytes > s.maxBytes || own.entries.Len() > s.maxEntries); own = s.owners[owner] {
		s.removeLocked(own.entries.Front().Value.(*dirEntry))
	}
}

// expireLocked removes the expired entries at the old end. Requires s.mu
// held.
func (s *DirStore) expireLocked(now time.Time) {
	for el := s.all.Front(); el != nil; el = s.all.Front() {
		e := el.Value.(*dirEntry)
		if !s.expired(e, now) {
			return
		}
		s.removeLocked(e)
	}
}

// removeLocked removes e's file and forgets it. Requires s.mu held.
func (s *DirStore) removeLocked(e *dirEntry) {
	os.Remove(s.path(e.id))
	s.forgetLocked(e)
}

// forgetLocked drops e from the index. Requires s.mu held.
func (s *DirStore) forgetLocked(e *dirEntry) {
	if own := s.owners[e.owner]; own != nil {
		own.entries.Remove(e.inOwner)
		own.bytes -= e.size
		if own.entries.Len() == 0 {
			delete(s.owners, e.owner)
		}
	}
	s.all.Remove(e.inAll)
	delete(s.files, e.id)
}

// encodeStored writes a stored response as a file's JSON: its id, owner
// and time first, then its items and the response object.
func encodeStored(st *Stored) ([]byte, error) {
	if !validObject(st.Response) {
		return nil, errors.New("responses: store: the response is not a JSON object")
	}
	b := make([]byte, 0, len(st.Response)+st.sizeOfItems()+128)
	b = appendStringMember(append(b, '{'), "id", st.ID)
	b = appendStringMember(b, "owner", st.Owner)
	b = appendInt(b, "created", st.Created.UnixNano())
	for _, list := range [...]struct {
		name  string
		items []Item
	}{{"input", st.Input}, {"output", st.Output}} {
		b = append(appendKey(b, list.name), '[')
		for i := range list.items {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendItem(b, &list.items[i])
		}
		b = append(b, ']')
	}
	b = compact(appendKey(b, "response"), st.Response)
	return append(b, '}', '\n'), nil
}

func (st *Stored) sizeOfItems() int {
	return int(st.size()) - len(st.Response)
}

// storedFields are the raw members of a stored response's file.
type storedFields struct {
	id, owner, created, input, output, response []byte
}

// decodeStored reads a file that encodeStored wrote.
func decodeStored(data []byte) (Stored, error) {
	var f storedFields
	bad := errors.New("responses: store: a file is not a stored response")
	if !topMembers(data, func(name []byte, _ aireq.Text, v []byte) {
		switch string(name) {
		case "id":
			f.id = v
		case "owner":
			f.owner = v
		case "created":
			f.created = v
		case "input":
			f.input = v
		case "output":
			f.output = v
		case "response":
			f.response = v
		}
	}) {
		return Stored{}, bad
	}
	var st Stored
	var err error
	if st.ID, err = readString("", f.id); err != nil {
		return Stored{}, bad
	}
	if st.Owner, err = readString("", f.owner); err != nil {
		return Stored{}, bad
	}
	ns, err := strconv.ParseInt(string(f.created), 10, 64)
	if err != nil {
		return Stored{}, bad
	}
	st.Created = time.Unix(0, ns)
	if st.Input, err = readItems(f.input); err != nil {
		return Stored{}, bad
	}
	if st.Output, err = readItems(f.output); err != nil {
		return Stored{}, bad
	}
	if absent(f.response) || f.response[0] != '{' {
		return Stored{}, bad
	}
	st.Response = append([]byte(nil), f.response...)
	return st, nil
}

func readItems(raw []byte) ([]Item, error) {
	var items []Item
	err := elements(orEmpty(raw), func(_ int, el []byte) error {
		it, keep, err := parseItem(el)
		if keep {
			items = append(items, it)
		}
		return err
	})
	return items, err
}

var _ Store = (*DirStore)(nil)
