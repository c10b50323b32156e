package gendocs

import "testing"

func TestUpToDate(t *testing.T) {
	if err := Run("../..", false); err != nil {
		t.Fatal(err)
	}
}

func TestDeterministic(t *testing.T) {
	a, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Files()
	for k := range a {
		if string(a[k]) != string(b[k]) {
			t.Errorf("%s differs between two renders", k)
		}
	}
}
