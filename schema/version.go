package schema

import (
	"fmt"
	"strconv"
	"strings"
)

// parseMajor returns the MAJOR part of a semantic version ("1.2.3" -> 1). Pre-release and
// build suffixes are allowed; anything that is not MAJOR.MINOR.PATCH is an error, because a
// consumer that guessed would risk processing a payload it does not understand.
func parseMajor(v string) (int, error) {
	core, _, _ := strings.Cut(v, "+")
	core, _, _ = strings.Cut(core, "-")
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return 0, fmt.Errorf("not a semantic version MAJOR.MINOR.PATCH")
	}
	var nums [3]int
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || (len(p) > 1 && p[0] == '0') {
			return 0, fmt.Errorf("not a semantic version MAJOR.MINOR.PATCH")
		}
		nums[i] = n
	}
	return nums[0], nil
}
