// Package batchapi is OpenAI's Files and Batch APIs on the gateway:
//
//	POST   /v1/files                 upload a batch input (multipart, purpose=batch)
//	GET    /v1/files/{id}            the file object
//	GET    /v1/files/{id}/content    its bytes
//	DELETE /v1/files/{id}            delete it
//	POST   /v1/batches               run an uploaded file
//	GET    /v1/batches/{id}          the batch object, with live request_counts
//	GET    /v1/batches               the caller's batches, newest first (after, limit)
//	POST   /v1/batches/{id}/cancel   stop it; what is done stays in its output
//
// with OpenAI's object shapes and status machine (validating → in_progress
// → finalizing → completed | failed | cancelling → cancelled | expired).
// Each batch runs in the background on package batch's engine, through the
// handler its owner would be served by, so lines get the gateway's
// failover, limits, budgets and cost. Files and batches belong to the
// client key that created them: another key gets 404. Files and batch
// state live in a data directory and survive a restart; a batch in
// progress when the process stopped resumes from its journal when New
// opens the directory again.
//
// Batches belong to the replica that runs them: their files and journal
// are in its directory. The Store interface is where batch objects are
// kept, so that a shared one can let any replica answer for any batch.
package batchapi
