package dashboard

import (
	"fmt"
	"strings"
	"time"

	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/services/gateway/domain"
)

// Chart drawing area in SVG user units; the SVG scales to its box.
const (
	chartWidth  = 600
	chartHeight = 160
)

// chart is a balance-over-time line drawn server-side as SVG (no chart library, no script).
// Positions are computed from micro-USDC integers; every amount shown as text is the API's own
// string, so nothing is rounded differently from the API.
type chart struct {
	// Points is the polyline's points attribute; empty when there is nothing to draw.
	Points string
	// ThresholdY is the y of the low-balance threshold line, -1 when off the chart.
	ThresholdY float64
	High, Low  money.Amount
	From, To   time.Time
	Count      int
	Width      int
	Height     int
}

// balanceChart draws the balance after each of movements (newest first, as the API lists
// them), oldest on the left, one step per movement.
func balanceChart(movements []domain.PoolTransaction, threshold money.Amount) chart {
	c := chart{Width: chartWidth, Height: chartHeight, ThresholdY: -1, Count: len(movements)}
	if len(movements) == 0 {
		return c
	}
	n := len(movements)
	c.High, c.Low = movements[0].BalanceAfter, movements[0].BalanceAfter
	for _, m := range movements {
		if m.BalanceAfter.Cmp(c.High) > 0 {
			c.High = m.BalanceAfter
		}
		if m.BalanceAfter.Cmp(c.Low) < 0 {
			c.Low = m.BalanceAfter
		}
	}
	c.To, c.From = movements[0].CreatedAt, movements[n-1].CreatedAt
	lo, hi := c.Low.Micros(), c.High.Micros()
	if hi == lo {
		hi = lo + 1
	}
	y := func(micros int64) float64 {
		return float64(chartHeight) - float64(micros-lo)/float64(hi-lo)*float64(chartHeight)
	}
	var pts strings.Builder
	for i := range n {
		m := movements[n-1-i]
		x := 0.0
		if n > 1 {
			x = float64(i) * float64(chartWidth) / float64(n-1)
		}
		fmt.Fprintf(&pts, "%.1f,%.1f ", x, y(m.BalanceAfter.Micros()))
	}
	c.Points = strings.TrimSpace(pts.String())
	if t := threshold.Micros(); t >= lo && t <= hi {
		c.ThresholdY = y(t)
	}
	return c
}
