package config

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func writeBudget(t *testing.T, dir, gpu string) string {
	t.Helper()
	p := filepath.Join(dir, BudgetFileName)
	if err := os.WriteFile(p, []byte("defaults:\n  gpu: "+gpu+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func mkdirs(t *testing.T, parts ...string) string {
	t.Helper()
	d := filepath.Join(parts...)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestSearchFindsAbove: the nearest file wins, found from a folder two
// levels below it.
func TestSearchFindsAbove(t *testing.T) {
	root := t.TempDir()
	want := writeBudget(t, root, "T4")
	deep := mkdirs(t, root, "a", "b")
	p, gpu, _, err := nearestBudgetGPU(deep)
	if err != nil || p != want || gpu != "T4" {
		t.Fatalf("got %q %q %v, want %s T4", p, gpu, err, want)
	}
	near := writeBudget(t, filepath.Join(root, "a"), "L4")
	if p, gpu, _, _ := nearestBudgetGPU(deep); p != near || gpu != "L4" {
		t.Fatalf("got %q %q, want the nearer %s L4", p, gpu, near)
	}
}

// TestSearchStopsAtRepoRoot: a file above the repository (a folder with
// .git, a folder or a worktree's file) is not the repository's.
func TestSearchStopsAtRepoRoot(t *testing.T) {
	for _, gitIsDir := range []bool{true, false} {
		root := t.TempDir()
		writeBudget(t, root, "T4")
		repo := mkdirs(t, root, "repo")
		if gitIsDir {
			mkdirs(t, repo, ".git")
		} else if err := os.WriteFile(filepath.Join(repo, ".git"), []byte("gitdir: /elsewhere\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		deep := mkdirs(t, repo, "src", "pkg")
		if p, gpu, _, err := nearestBudgetGPU(deep); p != "" || gpu != "" || err != nil {
			t.Errorf(".git dir %v: got %q %q %v, want nothing (the search stops at the repository root)", gitIsDir, p, gpu, err)
		}
		// The repository root's own file is still found.
		want := writeBudget(t, repo, "L4")
		if p, gpu, _, _ := nearestBudgetGPU(deep); p != want || gpu != "L4" {
			t.Errorf(".git dir %v: got %q %q, want %s L4", gitIsDir, p, gpu, want)
		}
	}
}

// TestSearchStopsAtWorldWritable: a file planted in a folder everyone may
// write to (the system temp folder, say) chooses nothing below it, nor
// does one above it; nor does a file everyone may write.
func TestSearchStopsAtWorldWritable(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix permission bits")
	}
	top := t.TempDir()
	writeBudget(t, top, "A100-SXM4-80GB") // above the shared folder
	shared := mkdirs(t, top, "shared")
	planted := writeBudget(t, shared, "T4")
	if err := os.Chmod(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(shared); fi.Mode().Perm()&0o002 == 0 {
		t.Skip("chmod 0777 did not make the folder world-writable")
	}
	deep := mkdirs(t, shared, "a", "b", "c")
	if p, gpu, _, err := nearestBudgetGPU(deep); p != "" || gpu != "" || err != nil {
		t.Errorf("got %q %q %v, want nothing (%s is in a world-writable folder)", p, gpu, err, planted)
	}
	// The user's own folder below the shared one is still searched.
	mine := writeBudget(t, filepath.Join(shared, "a"), "L4")
	if p, gpu, _, _ := nearestBudgetGPU(deep); p != mine || gpu != "L4" {
		t.Errorf("got %q %q, want %s L4", p, gpu, mine)
	}
	// A world-writable file stops the search, and is not read.
	if err := os.Chmod(mine, 0o666); err != nil {
		t.Fatal(err)
	}
	if p, gpu, _, err := nearestBudgetGPU(deep); p != "" || gpu != "" || err != nil {
		t.Errorf("world-writable file: got %q %q %v, want nothing", p, gpu, err)
	}
}

// TestSearchRefusesSpecialFiles: a budget file that is not a regular file
// is an error naming it, returned at once.
func TestSearchRefusesSpecialFiles(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, BudgetFileName), 0o755); err != nil {
		t.Fatal(err)
	}
	p, _, _, err := nearestBudgetGPU(root)
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("got %q %v, want an error naming the file", p, err)
	}
}
