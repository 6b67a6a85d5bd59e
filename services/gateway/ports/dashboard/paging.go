package dashboard

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/payplat/platform/pkg/validation"
)

// pageSize is the rows of a list page: small enough for a phone, large enough to scan.
const pageSize = 25

// maxPage bounds how deep a list can be paged by offset, so that no request makes the database
// skip millions of rows (the API's offset has no bound; the dashboard's page does).
const maxPage = 4000

// pager is a page of a list and the links around it.
type pager struct {
	Page    int
	HasMore bool
	// Total is the number of rows when known, else -1.
	Total int
	// query is the list's other parameters (filters), kept in the links.
	query url.Values
	path  string
}

// parsePage reads ?page= (1 when absent); anything else is the API's kind of validation error.
func parsePage(q url.Values) (int, error) {
	if !q.Has("page") {
		return 1, nil
	}
	n, err := strconv.Atoi(q.Get("page"))
	if err != nil || n < 1 || n > maxPage {
		return 0, validation.Invalid("page", "must be a whole number from 1 to 4000")
	}
	return n, nil
}

func (p pager) offset() int { return (p.Page - 1) * pageSize }

// Prev and Next are the links to the neighbouring pages, empty when there is none.
func (p pager) Prev() string {
	if p.Page <= 1 {
		return ""
	}
	return p.link(p.Page - 1)
}

// Next is the link to the next page, empty on the last.
func (p pager) Next() string {
	if !p.HasMore || p.Page >= maxPage {
		return ""
	}
	return p.link(p.Page + 1)
}

// Pages is the number of pages when the total is known, else 0.
func (p pager) Pages() int {
	if p.Total < 0 {
		return 0
	}
	return max(1, (p.Total+pageSize-1)/pageSize)
}

func (p pager) link(page int) string {
	q := url.Values{}
	for k, v := range p.query {
		q[k] = v
	}
	q.Del("page")
	if page > 1 {
		q.Set("page", strconv.Itoa(page))
	}
	if len(q) == 0 {
		return p.path
	}
	return p.path + "?" + q.Encode()
}

// listPage reads a list page's query and its ?page=; a bad page has been answered with the
// error page when ok is false, so that every list refuses it the same way.
func (d *Dashboard) listPage(w http.ResponseWriter, r *http.Request, s *session) (q url.Values, page int, ok bool) {
	q = r.URL.Query()
	page, err := parsePage(q)
	if err != nil {
		d.fail(w, r, s, err)
		return nil, 0, false
	}
	return q, page, true
}
