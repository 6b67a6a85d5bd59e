package domain

import (
	"fmt"
	"strings"
	"time"
)

// DefaultSchedule is SPEC 6.3: the delays before attempts 2 to 6.
var DefaultSchedule = Schedule{5 * time.Minute, 15 * time.Minute, 45 * time.Minute, 2 * time.Hour, 6 * time.Hour}

// Schedule is the delay after each failed attempt before the next one (WEBHOOK_RETRY_SCHEDULE):
// after failed attempt n, the next is due Schedule[n-1] later; after len(Schedule)+1 failed
// attempts the delivery is permanently failed.
type Schedule []time.Duration

// ParseSchedule reads a comma-separated list of positive Go durations ("5m,15m,45m,2h,6h").
func ParseSchedule(s string) (Schedule, error) {
	var out Schedule
	for part := range strings.SplitSeq(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(part))
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("WEBHOOK_RETRY_SCHEDULE: %q is not a positive duration", part)
		}
		out = append(out, d)
	}
	return out, nil
}

// UnmarshalText lets the configuration loader read a Schedule.
func (s *Schedule) UnmarshalText(text []byte) error {
	v, err := ParseSchedule(string(text))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// MaxAttempts is the number of automatic attempts: the initial one and one per delay.
func (s Schedule) MaxAttempts() int { return len(s) + 1 }

// Next returns when the next automatic attempt is due after attempts failed attempts ending at
// now, and false when none is left (the delivery is permanently failed).
func (s Schedule) Next(attempts int, now time.Time) (time.Time, bool) {
	if attempts < 1 || attempts > len(s) {
		return time.Time{}, false
	}
	return now.Add(s[attempts-1]), true
}
