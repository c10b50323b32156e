// Package s3test starts a real S3 server for tests: versitygw (an S3
// gateway over a POSIX directory), on 127.0.0.1 with a free port, random
// keys and a temporary directory, stopped when the test ends.
//
// The server is found through FSBOX_VERSITYGW, else PATH (`make s3server`
// builds it; `make test-s3` runs the TestS3… tests with it). Without it a
// test skips, except under CI=true, where it fails.
//
// The posix backend keeps each bucket as the directory DIR/BUCKET and each
// object as the plain file DIR/BUCKET/KEY (a key's '/' are directories; a
// directory marker "d/" is the directory DIR/BUCKET/d). A test may seed
// content by writing files there (Dir): they list, HEAD and GET as
// objects at once, but have no ETag (versitygw keeps an object's ETag in
// an extended attribute that only its own PUT writes), so a version-pinned
// read of one is not possible: use Put for an object whose version
// matters.
//
// Only tests and the bench import this package. Its file access (the
// server's binary, directory, log and certificates) is the harness's,
// outside every policy: it never runs inside fsbox, so it does not go
// through pkg/sandbox.
package s3test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/fsbox/fsbox/pkg/policy"
)

// Region is the server's region (versitygw's default).
const Region = "us-east-1"

// Server is a running versitygw.
type Server struct {
	dir      string
	endpoint string
	access   string
	secret   string
	caFile   string // TLS: the CA that signed the server's certificate
	client   *s3.Client
	logFile  string // the server's stdout and stderr: one line a request
}

type settings struct {
	tls bool
}

// An Option changes how Start starts the server.
type Option func(*settings)

// TLS serves HTTPS on https://localhost:PORT, with a certificate for
// localhost signed by a CA made for this server (ECDSA P-256); Env adds
// SSL_CERT_FILE naming the CA.
func TLS() Option { return func(s *settings) { s.tls = true } }

// Binary is the versitygw Start runs: FSBOX_VERSITYGW, else versitygw on
// PATH; "" when there is none.
func Binary() string {
	if b := os.Getenv("FSBOX_VERSITYGW"); b != "" {
		if _, err := os.Stat(b); err == nil { // the test harness's server binary: tests only, outside any policy
			return b
		}
		return ""
	}
	b, err := exec.LookPath("versitygw")
	if err != nil {
		return ""
	}
	return b
}

// Start starts versitygw for the test t, stopped at t's cleanup.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	if Binary() == "" {
		msg := "versitygw not found: make s3server (FSBOX_VERSITYGW=...)"
		if v := os.Getenv("FSBOX_VERSITYGW"); v != "" {
			msg += fmt.Sprintf("; FSBOX_VERSITYGW=%s is not there", v)
		}
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	s, stop, err := launch(t.TempDir(), t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			if b, err := os.ReadFile(s.logFile); err == nil { // the harness's own server log (tests only)
				t.Logf("versitygw's log (%s):\n%s", s.endpoint, tail(string(b), 4000))
			}
		}
	})
	return s
}

// ErrNoBinary is Launch's error when there is no versitygw (Binary).
var ErrNoBinary = errors.New("versitygw not found: make s3server (FSBOX_VERSITYGW=...)")

// Launch starts versitygw outside a test (a benchmark's server): its
// posix directory is DIR/data and its log and certificates lie in
// DIR/work (both made). stop stops it; the directories stay. Without a
// versitygw (Binary) the error is ErrNoBinary.
func Launch(dir string, opts ...Option) (s *Server, stop func(), err error) {
	if Binary() == "" {
		return nil, nil, ErrNoBinary
	}
	data, work := filepath.Join(dir, "data"), filepath.Join(dir, "work")
	for _, d := range []string{data, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, nil, err
		}
	}
	return launch(data, work, opts)
}

// LogFile is the server's log.
func (s *Server) LogFile() string { return s.logFile }

// launch starts versitygw over the posix directory data, its log and
// certificates in work.
func launch(data, work string, opts []Option) (*Server, func(), error) {
	var set settings
	for _, o := range opts {
		o(&set)
	}
	bin := Binary()
	s := &Server{dir: data, access: randHex(10), secret: randHex(20)}
	var args []string
	host := "127.0.0.1"
	scheme := "http"
	if set.tls {
		certFile, keyFile, caFile, err := makeCerts(work)
		if err != nil {
			return nil, nil, err
		}
		s.caFile = caFile
		args = append(args, "--cert", certFile, "--key", keyFile)
		host, scheme = "localhost", "https"
	}
	// A free port can be taken between its finding and the server's
	// bind: then the server exits, and another port is tried.
	var lastLog string
	for try := 0; try < 3; try++ {
		port, err := freePort()
		if err != nil {
			return nil, nil, err
		}
		s.endpoint = fmt.Sprintf("%s://%s:%d", scheme, host, port)
		s.logFile = filepath.Join(work, fmt.Sprintf("versitygw-%d.log", try))
		stop, err := s.start(bin, append(args, "--port", fmt.Sprintf("127.0.0.1:%d", port), "posix", s.dir))
		if err != nil {
			return nil, nil, err
		}
		if stop != nil {
			s.client = s.newClient()
			return s, stop, nil
		}
		b, _ := os.ReadFile(s.logFile)
		lastLog = string(b)
	}
	return nil, nil, fmt.Errorf("versitygw did not start:\n%s", lastLog)
}

// start runs the server and waits until it answers (its stop function),
// or until it exits (nil, nil); an error when it neither answers nor
// exits in time.
func (s *Server) start(bin string, args []string) (func(), error) {
	log, err := os.Create(s.logFile)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	cmd := exec.Command(bin, args...)
	// Only what the server needs: the host's VGW_* and AWS settings
	// never reach it.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Dir(s.logFile),
		"ROOT_ACCESS_KEY=" + s.access, "ROOT_SECRET_KEY=" + s.secret}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Dir = filepath.Dir(s.logFile)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start versitygw: %v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	stop := func() {
		select {
		case <-exited:
			return
		default:
		}
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	}
	hc := s.httpClient()
	hc.Timeout = time.Second
	for i := 0; i < 200; i++ {
		select {
		case <-exited:
			return nil, nil
		default:
		}
		resp, err := hc.Get(s.endpoint + "/")
		if err == nil {
			resp.Body.Close()
			return stop, nil
		}
		time.Sleep(25 * time.Millisecond)
	}
	stop()
	b, _ := os.ReadFile(s.logFile)
	return nil, fmt.Errorf("versitygw did not answer on %s within 200 tries:\n%s", s.endpoint, tail(string(b), 4000))
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// httpClient trusts the server's CA (TLS) and nothing else.
func (s *Server) httpClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	if s.caFile != "" {
		pool := x509.NewCertPool()
		b, _ := os.ReadFile(s.caFile)
		pool.AppendCertsFromPEM(b)
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: tr}
}

// newClient is the tests' own S3 client: the server's keys, nothing from
// the environment.
func (s *Server) newClient() *s3.Client {
	return s3.New(s3.Options{
		Region:       Region,
		BaseEndpoint: aws.String(s.endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(s.access, s.secret, ""),
		HTTPClient:   s.httpClient(),
		// No CRC trailers: plain requests.
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
}

// Requests is the server's request log so far, one request a line as
// "STATUS | METHOD | PATH | QUERY" (versitygw prints "TIME | vgw |
// STATUS | DURATION | ADDR | METHOD | PATH | - | QUERY", and lines of
// requests served at once can interleave, so a request is found by its
// tail wherever it sits), oldest first; Start's readiness probes are
// among them. A test takes len(Requests) before a call and looks at the
// lines after it to see which requests the call made.
func (s *Server) Requests(t testing.TB) []string {
	t.Helper()
	b, err := os.ReadFile(s.logFile)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, m := range requestLine.FindAllStringSubmatch(string(b), -1) {
		lines = append(lines, m[1]+" | "+m[2]+" | "+m[3]+" | "+strings.TrimSpace(m[4]))
	}
	return lines
}

// requestLine is the tail of a line of versitygw's log: status,
// duration, address, method, path, "-", query.
var requestLine = regexp.MustCompile(`(?m)(\d{3}) \|\s+[^|\s]+ \| [^|\s]+ \| ([A-Z]+) \| ([^|\s]+) \| - \|([^\n]*)$`)

// Client is an S3 client of the server with its root keys.
func (s *Server) Client() *s3.Client { return s.client }

// Endpoint is the server's URL: http://127.0.0.1:PORT, or with TLS
// https://localhost:PORT.
func (s *Server) Endpoint() string { return s.endpoint }

// Dir is the server's posix directory: a bucket is DIR/BUCKET, an object
// the file DIR/BUCKET/KEY (see the package's doc).
func (s *Server) Dir() string { return s.dir }

// Store is the [store] table that reaches the server.
func (s *Server) Store() policy.Store {
	return policy.Store{Endpoint: s.endpoint, Region: Region, PathStyle: true}
}

// Env is the environment a child fsbox needs to reach the server: the
// server's keys and region, and nothing of the host's AWS setup (no
// instance metadata, no shared config or credentials file, no profile,
// CA bundle or endpoint override); with TLS, SSL_CERT_FILE naming the CA.
func (s *Server) Env() []string {
	env := []string{
		"AWS_ACCESS_KEY_ID=" + s.access,
		"AWS_SECRET_ACCESS_KEY=" + s.secret,
		"AWS_SESSION_TOKEN=",
		"AWS_REGION=" + Region,
		"AWS_DEFAULT_REGION=",
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_CONFIG_FILE=/dev/null",
		"AWS_SHARED_CREDENTIALS_FILE=/dev/null",
		"AWS_PROFILE=",
		"AWS_DEFAULT_PROFILE=",
		"AWS_CA_BUNDLE=",
		"AWS_ENDPOINT_URL=",
		"AWS_ENDPOINT_URL_S3=",
		"AWS_WEB_IDENTITY_TOKEN_FILE=",
		"AWS_ROLE_ARN=",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI=",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI=",
	}
	if s.caFile != "" {
		env = append(env, "SSL_CERT_FILE="+s.caFile)
	}
	return env
}

// Setenv sets Env in this process for the rest of t (t.Setenv: not in a
// parallel test).
func (s *Server) Setenv(t testing.TB) {
	for _, kv := range s.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}

// Bucket creates the bucket name (CreateBucket: a directory made in DIR
// is not a bucket to versitygw, which answers InvalidBucketName, for it
// keeps the bucket's owner and ACL in the directory's attributes) and
// returns its name.
func (s *Server) Bucket(t testing.TB, name string) string {
	t.Helper()
	if _, err := s.client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: &name}); err != nil {
		t.Fatalf("create bucket %s: %v", name, err)
	}
	return name
}

// Put stores data as bucket/key through the server (with its ETag) and
// returns the ETag.
func (s *Server) Put(t testing.TB, bucket, key string, data []byte) string {
	t.Helper()
	out, err := s.client.PutObject(context.Background(), &s3.PutObjectInput{Bucket: &bucket, Key: &key,
		Body: strings.NewReader(string(data)), ContentLength: aws.Int64(int64(len(data)))})
	if err != nil {
		t.Fatalf("put %s/%s: %v", bucket, key, err)
	}
	return aws.ToString(out.ETag)
}

// IsNotFound reports whether err is S3's answer for a missing key.
func IsNotFound(err error) bool {
	var nk *types.NoSuchKey
	var nf *types.NotFound
	var re *awshttp.ResponseError
	return errors.As(err, &nk) || errors.As(err, &nf) || errors.As(err, &re) && re.HTTPStatusCode() == http.StatusNotFound
}

// makeCerts writes a CA and a certificate for localhost it signs (ECDSA
// P-256) into dir.
func makeCerts(dir string) (certFile, keyFile, caFile string, err error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", "", err
	}
	now := time.Now()
	ca := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "fsbox s3test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return "", "", "", err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return "", "", "", err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", "", err
	}
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "localhost"},
		DNSNames:     []string{"localhost"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		return "", "", "", err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", "", "", err
	}
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if e := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); e != nil && err == nil {
			err = e
		}
		return p
	}
	certFile, keyFile, caFile = write("cert.pem", "CERTIFICATE", leafDER), write("key.pem", "PRIVATE KEY", keyDER), write("ca.pem", "CERTIFICATE", caDER)
	return certFile, keyFile, caFile, err
}
