// Command probe does, as a second account, what that account could do to
// a broker's loopback ports; the tests run it as that account
// (peertest.Account) and judge its report. Every wait is bounded.
//
//	probe bind HOST:PORT
//	    binds the address; prints "bound" and exits 0, or the error and exits 1.
//	probe hold HOST:PORT N SECONDS
//	    opens up to N connections that send nothing and keeps them for
//	    SECONDS; prints JSON: how many opened, how many the server closed
//	    within the first second, and how many it left open to the end.
//	probe churn HOST:PORT SECONDS
//	    sends GET / on a new connection, one every 20 ms, for SECONDS or
//	    until a connection is refused; prints JSON: the status codes
//	    answered and whether a dial was refused (nothing listens any more).
//	probe stall HOST:PORT PATH N SECONDS
//	    opens N connections, each sending the headers of a POST to PATH
//	    whose 100-byte body never comes, and waits at most SECONDS; prints
//	    JSON: the status codes answered, how many connections the server
//	    closed, and the longest it took.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/berth-dev/berth/broker/peer/peertest"
)

func main() {
	if len(os.Args) < 3 {
		usage()
	}
	addr := os.Args[2]
	switch {
	case os.Args[1] == "bind" && len(os.Args) == 3:
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		ln.Close()
		fmt.Println("bound")
	case os.Args[1] == "hold" && len(os.Args) == 5:
		report(hold(addr, number(os.Args[3]), seconds(os.Args[4])))
	case os.Args[1] == "churn" && len(os.Args) == 4:
		report(churn(addr, seconds(os.Args[3])))
	case os.Args[1] == "stall" && len(os.Args) == 6:
		report(stall(addr, os.Args[3], number(os.Args[4]), seconds(os.Args[5])))
	default:
		usage()
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: probe bind HOST:PORT | hold HOST:PORT N SECONDS | churn HOST:PORT SECONDS | stall HOST:PORT PATH N SECONDS")
	os.Exit(2)
}

func number(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 100000 {
		usage()
	}
	return n
}

func seconds(s string) time.Duration { return time.Duration(number(s)) * time.Second }

func report(v any) {
	if err := json.NewEncoder(os.Stdout).Encode(v); err != nil {
		os.Exit(3)
	}
}

func hold(addr string, n int, d time.Duration) peertest.Held {
	var r peertest.Held
	var mu sync.Mutex
	var wg sync.WaitGroup
	end := time.Now().Add(d)
	for range n {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			if r.DialError == "" {
				r.DialError = err.Error()
			}
			continue
		}
		r.Opened++
		opened := time.Now()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			c.SetReadDeadline(end)
			_, err := c.Read(make([]byte, 1))
			mu.Lock()
			defer mu.Unlock()
			switch ne, ok := err.(net.Error); {
			case ok && ne.Timeout():
				r.OpenAtEnd++
			case time.Since(opened) < time.Second:
				r.ClosedAtOnce++
			}
		}()
	}
	wg.Wait()
	return r
}

// churnEvery is the pause between two of churn's requests.
const churnEvery = 20 * time.Millisecond

func churn(addr string, d time.Duration) peertest.Churned {
	r := peertest.Churned{Statuses: map[int]int{}}
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	for end := time.Now().Add(d); time.Now().Before(end); {
		resp, err := c.Get("http://" + addr + "/")
		if err != nil {
			var op *net.OpError
			if errors.As(err, &op) && op.Op == "dial" {
				r.DialRefused = true
				return r
			}
			r.Statuses[0]++
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		r.Statuses[resp.StatusCode]++
		// Fifty requests a second keep any idle timer of a broker from
		// running out as surely as a busy loop, at a fraction of its CPU.
		time.Sleep(churnEvery)
	}
	return r
}

func stall(addr, path string, n int, d time.Duration) peertest.Stalled {
	r := peertest.Stalled{Statuses: map[int]int{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	end := time.Now().Add(d)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			status, closed := stallOne(addr, path, end)
			mu.Lock()
			defer mu.Unlock()
			r.Statuses[status]++
			if closed {
				r.Closed++
				r.SlowestClose = max(r.SlowestClose, time.Since(start).Seconds())
			}
		}()
	}
	wg.Wait()
	return r
}

// stallOne sends a POST's headers and no body, reads the answer if one
// comes, and reports its status and whether the server closed the
// connection before end.
func stallOne(addr, path string, end time.Time) (int, bool) {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return 0, false
	}
	defer c.Close()
	c.SetDeadline(end)
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{", path, addr)
	br := bufio.NewReader(c)
	status := 0
	if resp, err := http.ReadResponse(br, nil); err == nil {
		status = resp.StatusCode
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	_, err = io.Copy(io.Discard, br)
	ne, ok := err.(net.Error)
	return status, !(ok && ne.Timeout())
}
