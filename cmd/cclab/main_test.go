package main

import (
	"os"
	"testing"
)

// asMainEnv makes this test binary act as cclab itself when a test starts
// it (or a command of cclab re-executes it, as `topo up` does to start the
// supervisor): the commands are tested as the processes they are.
const asMainEnv = "CCLAB_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Setenv(asMainEnv, "1")
	code := m.Run()
	os.Exit(code)
}
