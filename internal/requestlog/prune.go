package requestlog

import "fmt"

// prune keeps the bounds: the newest MaxRows rows, none older than
// MaxAge, and the pages in use within MaxBytes (oldest rows first). The
// pages freed are reused by the next writes, so the file stays near its
// bound instead of growing.
func (l *Log) prune() error {
	if _, err := l.db.Exec(`DELETE FROM requests WHERE id <= (SELECT max(id) FROM requests) - ?`, l.o.MaxRows); err != nil {
		return fmt.Errorf("requestlog: %w", err)
	}
	cutoff := l.clk.Now().Add(-l.o.MaxAge).UnixMicro()
	if _, err := l.db.Exec(`DELETE FROM requests WHERE time < ?`, cutoff); err != nil {
		return fmt.Errorf("requestlog: %w", err)
	}
	if l.o.MaxBytes <= 0 {
		return nil
	}
	for range 20 {
		used, err := l.usedBytes()
		if err != nil || used <= l.o.MaxBytes {
			return err
		}
		// A tenth of the rows at a time, oldest first.
		if _, err := l.db.Exec(`DELETE FROM requests WHERE id <= (SELECT min(id) + (max(id) - min(id)) / 10 FROM requests)`); err != nil {
			return fmt.Errorf("requestlog: %w", err)
		}
	}
	return nil
}

// usedBytes is the size of the file's pages in use (not free).
func (l *Log) usedBytes() (int64, error) {
	var pages, free, size int64
	row := l.db.QueryRow(`SELECT page_count, freelist_count, page_size FROM pragma_page_count(), pragma_freelist_count(), pragma_page_size()`)
	if err := row.Scan(&pages, &free, &size); err != nil {
		return 0, fmt.Errorf("requestlog: %w", err)
	}
	return (pages - free) * size, nil
}

// Stats are the log's size.
type Stats struct {
	Rows      int64  `json:"rows"`
	UsedBytes int64  `json:"used_bytes"`
	Dropped   uint64 `json:"dropped"`
}

// Stats counts the rows and the bytes in use.
func (l *Log) Stats() (Stats, error) {
	var s Stats
	if err := l.db.QueryRow(`SELECT count(*) FROM requests`).Scan(&s.Rows); err != nil {
		return s, fmt.Errorf("requestlog: %w", err)
	}
	var err error
	s.UsedBytes, err = l.usedBytes()
	s.Dropped = l.Dropped()
	return s, err
}
