package batchapi

// File is OpenAI's file object, with the owner and where its bytes are.
type File struct {
	ID        string `json:"id"`
	Object    string `json:"object"` // "file"
	Bytes     int64  `json:"bytes"`
	CreatedAt int64  `json:"created_at"`
	ExpiresAt *int64 `json:"expires_at"`
	Filename  string `json:"filename"`
	Purpose   string `json:"purpose"` // batch, batch_output
	Status    string `json:"status"`  // processed

	// Owner is the client that uploaded the file (or whose batch wrote it).
	Owner string `json:"owner,omitempty"`
	// Path is where the bytes are, relative to the data directory.
	Path string `json:"path,omitempty"`
	// Created is CreatedAt in nanoseconds, which orders the files a key
	// lists (CreatedAt has seconds only).
	Created int64 `json:"created_ns,omitempty"`
}

// public returns f as the API shows it.
func (f File) public() File {
	f.Owner, f.Path, f.Created = "", "", 0
	return f
}

// Batch is OpenAI's batch object, with its owner.
type Batch struct {
	ID               string            `json:"id"`
	Object           string            `json:"object"` // "batch"
	Endpoint         string            `json:"endpoint"`
	Errors           *BatchErrors      `json:"errors"`
	InputFileID      string            `json:"input_file_id"`
	CompletionWindow string            `json:"completion_window"`
	Status           string            `json:"status"`
	OutputFileID     *string           `json:"output_file_id"`
	ErrorFileID      *string           `json:"error_file_id"`
	CreatedAt        int64             `json:"created_at"`
	InProgressAt     *int64            `json:"in_progress_at"`
	ExpiresAt        *int64            `json:"expires_at"`
	FinalizingAt     *int64            `json:"finalizing_at"`
	CompletedAt      *int64            `json:"completed_at"`
	FailedAt         *int64            `json:"failed_at"`
	ExpiredAt        *int64            `json:"expired_at"`
	CancellingAt     *int64            `json:"cancelling_at"`
	CancelledAt      *int64            `json:"cancelled_at"`
	RequestCounts    RequestCounts     `json:"request_counts"`
	Metadata         map[string]string `json:"metadata"`

	// Owner is the client that created the batch.
	Owner string `json:"owner,omitempty"`
	// CreatedNs orders batches created in the same second.
	CreatedNs int64 `json:"created_ns,omitempty"`
	// Cost is what the batch has cost so far (USD), a Fusebox extension.
	Cost float64 `json:"fusebox_cost"`
}

// The statuses of a batch.
const (
	StatusValidating = "validating"
	StatusFailed     = "failed"
	StatusInProgress = "in_progress"
	StatusFinalizing = "finalizing"
	StatusCompleted  = "completed"
	StatusExpired    = "expired"
	StatusCancelling = "cancelling"
	StatusCancelled  = "cancelled"
)

// active reports a status whose batch still has work to do.
func active(status string) bool {
	switch status {
	case StatusValidating, StatusInProgress, StatusFinalizing, StatusCancelling:
		return true
	}
	return false
}

// BatchErrors is why a batch failed.
type BatchErrors struct {
	Object string       `json:"object"` // "list"
	Data   []BatchError `json:"data"`
}

// BatchError is one reason a batch failed.
type BatchError struct {
	Code    string  `json:"code"`
	Message string  `json:"message"`
	Param   *string `json:"param"`
	Line    *int    `json:"line"`
}

// RequestCounts counts a batch's requests.
type RequestCounts struct {
	Total     int64 `json:"total"`
	Completed int64 `json:"completed"`
	Failed    int64 `json:"failed"`
}

// public returns b as the API shows it.
func (b Batch) public() Batch {
	b.Owner, b.CreatedNs = "", 0
	if b.Metadata == nil {
		b.Metadata = map[string]string{}
	}
	return b
}

func at(t int64) *int64 { return &t }
