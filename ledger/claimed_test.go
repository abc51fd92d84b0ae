package ledger_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
)

// Claimed jobs (issue 18): inserted running under the worker id, their outcomes written
// as River's executor writes a worked job's.
func TestTP_ClaimedJobsFinishAsRiver(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, claimedJobsFinishAsRiver)
}

func claimedJobsFinishAsRiver(t *testing.T, b ledger.Backend) {
	l, _ := setup(t, b, ledger.Config{})
	ctx := testenv.Context(t, 30*time.Second)
	takeOver := `UPDATE ` + l.Table("river_job") + ` SET attempted_by = array_append(attempted_by, 'someone-else') WHERE id = $1`
	cancel := `UPDATE ` + l.Table("river_job") + ` SET state = 'cancelled', finalized_at = now() WHERE id = $1`
	if b == ledger.SQLite {
		takeOver = `UPDATE river_job SET attempted_by = jsonb(json_insert(json(attempted_by), '$[#]', 'someone-else')) WHERE id = ?`
		cancel = `UPDATE river_job SET state = 'cancelled', finalized_at = datetime('now', 'subsec') WHERE id = ?`
	}

	claim := func(n int, maxAttempts int) []*rivertype.JobRow {
		t.Helper()
		params := make([]river.InsertManyParams, n)
		for i := range params {
			params[i] = river.InsertManyParams{Args: pingArgs{N: i}, InsertOpts: &river.InsertOpts{
				Queue: "elsewhere", MaxAttempts: maxAttempts, Tags: []string{"a", "b"}}} // a queue no worker here fetches
		}
		var rows []*rivertype.JobRow
		err := l.InTx(ctx, func(tx any) error {
			var err error
			rows, err = l.InsertClaimedTx(ctx, tx, params)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}

	// Not working yet: nothing to claim under.
	if err := l.InTx(ctx, func(tx any) error {
		_, err := l.InsertClaimedTx(ctx, tx, []river.InsertManyParams{{Args: pingArgs{}}})
		return err
	}); !errors.Is(err, ledger.ErrNoClaim) {
		t.Fatalf("InsertClaimedTx before Start = %v, want ErrNoClaim", err)
	}
	if err := l.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Stop(context.Background()) })

	rows := claim(7, 3)
	last := claim(1, 1)[0]
	other := claim(1, 3)[0]
	others := claim(3, 1)
	// Taken over and fetched again by another worker while this one still ran them:
	// whatever this one's outcome, the job is the new holder's.
	for _, id := range []int64{other.ID, others[0].ID, others[1].ID, others[2].ID} {
		if _, err := l.DB().ExecContext(ctx, takeOver, id); err != nil {
			t.Fatal(err)
		}
	}
	for i, r := range rows {
		got := read(t, l, r.ID)
		var args pingArgs
		if err := json.Unmarshal([]byte(got.Args), &args); err != nil || args.N != i {
			t.Fatalf("claimed row %d args %s (%v), want n %d", i, got.Args, err, i)
		}
		if got.State != "running" || got.Attempt != 1 || got.By != l.WorkerID() || got.Tags != "a,b" || r.Attempt != 1 || r.Queue != "elsewhere" {
			t.Fatalf("claimed row %d = %+v (returned %+v); want running, attempt 1 by %s, tags a,b", i, got, r, l.WorkerID())
		}
		// River reads the row as it reads the jobs it inserts itself.
		j, err := l.JobGet(ctx, r.ID)
		if err != nil || j.State != rivertype.JobStateRunning || j.Attempt != 1 || ledger.Holder(j) != l.WorkerID() ||
			!slices.Equal(j.Tags, []string{"a", "b"}) || j.Queue != "elsewhere" || j.MaxAttempts != 3 ||
			j.AttemptedAt == nil || !j.AttemptedAt.Equal(*r.AttemptedAt) || !j.CreatedAt.Equal(r.CreatedAt) {
			t.Fatalf("claimed row %d as River reads it = %+v, %v; returned %+v", i, j, err, r)
		}
	}
	// A job that left running before its outcome (an operator cancelled it).
	if _, err := l.DB().ExecContext(ctx, cancel, rows[6].ID); err != nil {
		t.Fatal(err)
	}
	started := time.Now().Add(-time.Second)
	retryAt := time.Now().Add(time.Hour)
	outs := []ledger.Outcome{
		{Job: rows[0], Meta: map[string]any{"status": 204}},
		{Job: rows[1], Err: river.JobSnooze(time.Minute), Meta: map[string]any{"k": 1}},
		{Job: rows[2], Err: &rivertype.JobSnoozeError{}}, // a release
		{Job: rows[3], Err: river.JobCancel(errors.New("gone")), Started: started},
		{Job: rows[4], Err: errors.New("status 500"), Started: started, NextRetry: func() time.Time { return retryAt }},
		{Job: rows[5], Err: errors.New("status 500"), Started: started, NextRetry: func() time.Time { return time.Now() }},
		{Job: rows[6], Meta: map[string]any{"status": 200}},
		{Job: last, Err: errors.New("status 502"), Started: started},
		{Job: other, Meta: map[string]any{"status": 204}},
		{Job: others[0], Err: errors.New("status 503"), Started: started}, // would be discarded (last attempt)
		{Job: others[1], Err: river.JobSnooze(time.Minute)},
		{Job: others[2], Err: river.JobCancel(errors.New("gone")), Started: started},
	}
	if err := l.Finish(ctx, outs); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		state   string
		attempt int
		errors  int
		meta    string // a key of the metadata, and its value
	}{
		{"completed", 1, 0, "status=204"},
		{"scheduled", 0, 0, "snoozes=1"},
		{"available", 0, 0, "snoozes="},
		{"cancelled", 1, 1, ""},
		{"retryable", 1, 1, ""},
		{"available", 1, 1, ""}, // due at once: available, as River's executor makes it
		{"cancelled", 1, 0, "status=200"},
		{"discarded", 1, 1, ""},
		{"running", 1, 0, "status="}, // left to its new holder
		{"running", 1, 0, ""},
		{"running", 1, 0, "snoozes="},
		{"running", 1, 0, ""},
	}
	for i, w := range want {
		id := outs[i].Job.ID
		got := read(t, l, id)
		if got.State != w.state || got.Attempt != w.attempt || got.Errors != w.errors {
			t.Errorf("outcome %d: job = %+v; want state %s, attempt %d, %d errors", i, got, w.state, w.attempt, w.errors)
		}
		if w.meta != "" {
			if kv := got.meta(w.meta); kv != w.meta {
				t.Errorf("outcome %d: metadata %s, want %s", i, got.Metadata, w.meta)
			}
		}
	}
	if got := read(t, l, rows[4].ID); got.ScheduledAt.Sub(retryAt).Abs() > time.Second || got.FirstErr.Attempt != 1 || got.FirstErr.Error != "status 500" {
		t.Errorf("retryable job = %+v; want scheduled at NextRetry with attempt 1's error", got)
	}
	if got := read(t, l, rows[0].ID); got.Finalized == nil {
		t.Error("completed job has no finalized_at")
	}
	// An outcome whose job names no holder matches none: the job is left as it is, on
	// both stores (SQLite's completion reads an absent holder as "any").
	orphan := *claim(1, 3)[0]
	orphan.AttemptedBy = nil
	if err := l.Finish(ctx, []ledger.Outcome{{Job: &orphan, Meta: map[string]any{"status": 204}}}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, l, orphan.ID); got.State != "running" {
		t.Errorf("a job finished without a holder = %+v; want left running", got)
	}
}

type jobState struct {
	State       string
	Attempt     int
	By          string
	Args        string
	Tags        string
	Errors      int
	FirstErr    rivertype.AttemptError
	Metadata    string
	ScheduledAt time.Time
	Finalized   *time.Time
}

func (j jobState) meta(kv string) string {
	var m map[string]any
	_ = json.Unmarshal([]byte(j.Metadata), &m)
	for i := range kv {
		if kv[i] == '=' {
			v, ok := m[kv[:i]]
			if !ok {
				return kv[:i] + "="
			}
			b, _ := json.Marshal(v)
			return kv[:i] + "=" + string(b)
		}
	}
	return ""
}

// read reads a job's row with SQL of its own (not River's decoding).
func read(t *testing.T, l *ledger.Ledger, id int64) jobState {
	t.Helper()
	var j jobState
	var first []byte
	q := `SELECT state::text, attempt, coalesce(attempted_by[array_upper(attempted_by, 1)], ''),
		args::text, array_to_string(tags, ','), coalesce(array_length(errors, 1), 0), coalesce(errors[1]::text, '{}'), metadata::text,
		scheduled_at, finalized_at FROM ` + l.Table("river_job") + ` WHERE id = $1`
	if l.Backend() == ledger.SQLite {
		q = `SELECT state, attempt, coalesce(json_extract(attempted_by, '$[#-1]'), ''),
			json(args), coalesce((SELECT group_concat(value, ',') FROM json_each(tags)), ''),
			coalesce(json_array_length(errors), 0), coalesce(json(errors) -> '$[0]', '{}'), json(metadata),
			scheduled_at, finalized_at FROM river_job WHERE id = ?`
	}
	var sched, fin any
	err := l.DB().QueryRow(q, id).
		Scan(&j.State, &j.Attempt, &j.By, &j.Args, &j.Tags, &j.Errors, &first, &j.Metadata, &sched, &fin)
	if err != nil {
		t.Fatalf("read job %d: %v", id, err)
	}
	j.ScheduledAt = dbTime(t, sched)
	if fin != nil {
		f := dbTime(t, fin)
		j.Finalized = &f
	}
	_ = json.Unmarshal(first, &j.FirstErr)
	return j
}

// dbTime is a time column as either backend's driver scans it (SQLite: River's text).
func dbTime(t *testing.T, v any) time.Time {
	t.Helper()
	switch v := v.(type) {
	case time.Time:
		return v
	case string:
		at, err := time.Parse("2006-01-02 15:04:05.000", v)
		if err != nil {
			t.Fatalf("time %q: %v", v, err)
		}
		return at
	}
	t.Fatalf("time column scanned as %T", v)
	return time.Time{}
}
