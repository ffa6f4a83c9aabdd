// Courier's binding to libcurl, loaded at run time from the libcurl.so.4 every Linux Swift
// install already has (FoundationNetworking links it), so no -dev package is needed to build.
// Only what CurlTransport (and the benchmark's C loops) use is declared; the numbers are
// libcurl's stable ABI (curl.h).
// libcurl's setopt/getinfo are variadic: calling them from C keeps the variadic convention.
#ifndef COURIER_CCURL_H
#define COURIER_CCURL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __linux__

typedef struct courier_curl_easy courier_curl_easy;
typedef struct courier_curl_multi courier_curl_multi;
typedef struct courier_curl_slist courier_curl_slist;
typedef struct courier_curl_share courier_curl_share;
typedef struct courier_curl_cookie_jar courier_curl_cookie_jar;

/// Loads libcurl.so.4 and initialises it once. Returns 0, or -1 when it cannot be loaded
/// (then `courier_curl_load_error` says why).
int courier_curl_load(void);
/// Why loading failed, or NULL.
const char *courier_curl_load_error(void);
/// libcurl's version text, e.g. "libcurl/7.88.1 OpenSSL/3.0.17 …".
const char *courier_curl_version(void);

// Easy handles.
courier_curl_easy *courier_curl_easy_init(void);
void courier_curl_easy_cleanup(courier_curl_easy *easy);
/// Sets every option back to its default; the handle keeps its buffers, its cookie share and
/// its TLS session cache (for reuse by the next transfer of the same transport).
void courier_curl_easy_reset(courier_curl_easy *easy);
/// Runs one transfer to its end on this thread (the benchmark's plain C loop; Courier itself
/// drives transfers through a multi handle).
int courier_curl_easy_perform(courier_curl_easy *easy);
int courier_curl_setopt_long(courier_curl_easy *easy, int option, long value);
int courier_curl_setopt_pointer(courier_curl_easy *easy, int option, const void *value);
int courier_curl_setopt_offset(courier_curl_easy *easy, int option, int64_t value);
int courier_curl_setopt_function(courier_curl_easy *easy, int option, void (*function)(void));
int courier_curl_getinfo_long(courier_curl_easy *easy, int info, long *value);
int courier_curl_getinfo_offset(courier_curl_easy *easy, int info, int64_t *value);

/// What libcurl counted about a finished transfer, for a request's timeline; -1 where it does
/// not say (`post_transfer_us` before libcurl 8.10).
typedef struct {
    int64_t post_transfer_us;
    long new_connections;
    long request_header_bytes;
    long response_header_bytes;
    int64_t uploaded;
    int64_t downloaded;
    long primary_port;
    const char *primary_ip;
} courier_curl_facts;
/// Fills `facts` with one call across the C boundary.
void courier_curl_read_facts(courier_curl_easy *easy, courier_curl_facts *facts);
const char *courier_curl_easy_strerror(int code);
/// Pauses receiving (`COURIER_CURLPAUSE_RECV`) or lets a transfer go on (`COURIER_CURLPAUSE_CONT`).
int courier_curl_easy_pause(courier_curl_easy *easy, int bitmask);
/// The socket of the connection `easy` last used (after its transfer), or -1.
int courier_curl_last_socket(courier_curl_easy *easy);
/// Sends bytes on the connection of a handle that `COURIER_CURLOPT_CONNECT_ONLY` made (one that
/// speaks its own protocol, a WebSocket's): TLS, when the URL asked for it, is libcurl's. Returns
/// a CURLE code, `COURIER_CURLE_AGAIN` when the socket takes nothing now; `sent` says how much
/// went.
int courier_curl_easy_send(courier_curl_easy *easy, const void *buffer, size_t length, size_t *sent);
/// Receives bytes on such a connection: `COURIER_CURLE_AGAIN` when none are there yet, and 0
/// bytes with `COURIER_CURLE_OK` once the peer has closed it.
int courier_curl_easy_recv(courier_curl_easy *easy, void *buffer, size_t length, size_t *received);
/// When `socket` is still the connection from `local_port` to `peer_port` and holds bytes
/// nobody asked for yet (what an earlier answer sent past its end), shuts it down and
/// returns 1; otherwise returns 0.
int courier_socket_discard_if_unread(int socket, int local_port, int peer_port);

// Header lists.
courier_curl_slist *courier_curl_slist_append(courier_curl_slist *list, const char *line);
void courier_curl_slist_free_all(courier_curl_slist *list);

// Cookie jars: libcurl's cookie store in a share handle, safe to use from several threads.
/// Makes an empty jar, or NULL.
courier_curl_cookie_jar *courier_curl_cookie_jar_create(void);
/// Makes `easy` read and store cookies in `jar`. Returns 0 or a libcurl error code.
int courier_curl_cookie_jar_use(courier_curl_easy *easy, courier_curl_cookie_jar *jar);
/// Frees a jar. Returns 0, or -1 (and frees nothing) while an easy handle still uses it.
int courier_curl_cookie_jar_destroy(courier_curl_cookie_jar *jar);

// Multi handles.
courier_curl_multi *courier_curl_multi_init(void);
int courier_curl_multi_cleanup(courier_curl_multi *multi);
int courier_curl_multi_setopt_long(courier_curl_multi *multi, int option, long value);
int courier_curl_multi_add_handle(courier_curl_multi *multi, courier_curl_easy *easy);
int courier_curl_multi_remove_handle(courier_curl_multi *multi, courier_curl_easy *easy);
int courier_curl_multi_perform(courier_curl_multi *multi, int *running);
int courier_curl_multi_poll(courier_curl_multi *multi, int timeout_ms);
int courier_curl_multi_wakeup(courier_curl_multi *multi);
/// The next finished transfer: returns 1 and sets `easy` and `result`, or 0 when none is left.
int courier_curl_multi_next_done(courier_curl_multi *multi, courier_curl_easy **easy, int *result);

// Option numbers (CURLOPT_*: type base + number).
enum {
    COURIER_CURLOPT_WRITEDATA = 10001,
    COURIER_CURLOPT_URL = 10002,
    COURIER_CURLOPT_READDATA = 10009,
    COURIER_CURLOPT_ERRORBUFFER = 10010,
    COURIER_CURLOPT_WRITEFUNCTION = 20011,
    COURIER_CURLOPT_READFUNCTION = 20012,
    COURIER_CURLOPT_POSTFIELDS = 10015,
    COURIER_CURLOPT_HTTPHEADER = 10023,
    COURIER_CURLOPT_HEADERDATA = 10029,
    COURIER_CURLOPT_COOKIEFILE = 10031,
    COURIER_CURLOPT_CUSTOMREQUEST = 10036,
    COURIER_CURLOPT_NOPROGRESS = 43,
    COURIER_CURLOPT_NOBODY = 44,
    COURIER_CURLOPT_UPLOAD = 46,
    COURIER_CURLOPT_POST = 47,
    COURIER_CURLOPT_FOLLOWLOCATION = 52,
    COURIER_CURLOPT_HTTPPROXYTUNNEL = 61,
    COURIER_CURLOPT_FRESH_CONNECT = 74,
    COURIER_CURLOPT_XFERINFODATA = 10057,
    COURIER_CURLOPT_SSL_VERIFYPEER = 64,
    COURIER_CURLOPT_CAINFO = 10065,
    COURIER_CURLOPT_HEADERFUNCTION = 20079,
    COURIER_CURLOPT_HTTPGET = 80,
    COURIER_CURLOPT_SSL_VERIFYHOST = 81,
    COURIER_CURLOPT_HTTP_VERSION = 84,
    COURIER_CURLOPT_NOSIGNAL = 99,
    COURIER_CURLOPT_SHARE = 10100,
    COURIER_CURLOPT_ACCEPT_ENCODING = 10102,
    COURIER_CURLOPT_PRIVATE = 10103,
    COURIER_CURLOPT_INFILESIZE_LARGE = 30115,
    COURIER_CURLOPT_POSTFIELDSIZE_LARGE = 30120,
    COURIER_CURLOPT_TCP_NODELAY = 121,
    COURIER_CURLOPT_CONNECT_ONLY = 141,
    COURIER_CURLOPT_TIMEOUT_MS = 155,
    COURIER_CURLOPT_CONNECTTIMEOUT_MS = 156,
    COURIER_CURLOPT_PROTOCOLS = 181,
    COURIER_CURLOPT_XFERINFOFUNCTION = 20219,
    COURIER_CURLOPT_PINNEDPUBLICKEY = 10230,
    COURIER_CURLOPT_SUPPRESS_CONNECT_HEADERS = 265,
    COURIER_CURLOPT_PREREQFUNCTION = 20312,
    COURIER_CURLOPT_PREREQDATA = 10313,
    COURIER_CURLOPT_PROTOCOLS_STR = 10318,
};

// Multi option numbers (CURLMOPT_*).
enum {
    COURIER_CURLMOPT_MAXCONNECTS = 6,
    COURIER_CURLMOPT_MAX_HOST_CONNECTIONS = 7,
    COURIER_CURLMOPT_MAX_CONCURRENT_STREAMS = 16,
};

// Information numbers (CURLINFO_*: type base + number).
enum {
    COURIER_CURLINFO_RESPONSE_CODE = 0x200002,
    COURIER_CURLINFO_PRIMARY_PORT = 0x200028,
    COURIER_CURLINFO_LOCAL_PORT = 0x20002A,
    COURIER_CURLINFO_HTTP_VERSION = 0x20002E,
    COURIER_CURLINFO_TOTAL_TIME_T = 0x600032,
    COURIER_CURLINFO_NAMELOOKUP_TIME_T = 0x600033,
    COURIER_CURLINFO_CONNECT_TIME_T = 0x600034,
    COURIER_CURLINFO_STARTTRANSFER_TIME_T = 0x600036,
    COURIER_CURLINFO_APPCONNECT_TIME_T = 0x600038,
    COURIER_CURLINFO_ACTIVESOCKET = 0x50002C,
    COURIER_CURLINFO_PRIMARY_IP = 0x100020,
    COURIER_CURLINFO_HEADER_SIZE = 0x20000B,
    COURIER_CURLINFO_REQUEST_SIZE = 0x20000C,
    COURIER_CURLINFO_NUM_CONNECTS = 0x20001A,
    COURIER_CURLINFO_SIZE_UPLOAD_T = 0x600007,
    COURIER_CURLINFO_SIZE_DOWNLOAD_T = 0x600008,
    // libcurl 8.10 and later; older ones refuse it (the phase is then not measured).
    COURIER_CURLINFO_POSTTRANSFER_TIME_T = 0x600043,
};

// Values.
enum {
    COURIER_CURL_HTTP_VERSION_1_1 = 2,
    COURIER_CURL_HTTP_VERSION_2TLS = 4,
    COURIER_CURLPROTO_HTTP = 1,
    COURIER_CURLPROTO_HTTPS = 2,
    COURIER_CURL_READFUNC_ABORT = 0x10000000,
    COURIER_CURL_WRITEFUNC_ERROR = -1,
    COURIER_CURL_WRITEFUNC_PAUSE = 0x10000001,
    COURIER_CURLPAUSE_RECV = 1,
    COURIER_CURLPAUSE_CONT = 0,
};

// Result codes (CURLE_*) Courier maps to its own errors.
enum {
    COURIER_CURLE_OK = 0,
    COURIER_CURLE_UNKNOWN_OPTION = 48,
    COURIER_CURLE_UNSUPPORTED_PROTOCOL = 1,
    COURIER_CURLE_URL_MALFORMAT = 3,
    COURIER_CURLE_COULDNT_RESOLVE_HOST = 6,
    COURIER_CURLE_COULDNT_CONNECT = 7,
    COURIER_CURLE_WEIRD_SERVER_REPLY = 8,
    COURIER_CURLE_HTTP2 = 16,
    COURIER_CURLE_PARTIAL_FILE = 18,
    COURIER_CURLE_WRITE_ERROR = 23,
    COURIER_CURLE_OUT_OF_MEMORY = 27,
    COURIER_CURLE_READ_ERROR = 26,
    COURIER_CURLE_OPERATION_TIMEDOUT = 28,
    COURIER_CURLE_SSL_CONNECT_ERROR = 35,
    COURIER_CURLE_ABORTED_BY_CALLBACK = 42,
    COURIER_CURLE_GOT_NOTHING = 52,
    COURIER_CURLE_SEND_ERROR = 55,
    COURIER_CURLE_RECV_ERROR = 56,
    COURIER_CURLE_SSL_CERTPROBLEM = 58,
    COURIER_CURLE_PEER_FAILED_VERIFICATION = 60,
    COURIER_CURLE_BAD_CONTENT_ENCODING = 61,
    COURIER_CURLE_SSL_CACERT_BADFILE = 77,
    COURIER_CURLE_AGAIN = 81,
    COURIER_CURLE_SSL_ISSUER_ERROR = 83,
    COURIER_CURLE_SSL_PINNEDPUBKEYNOTMATCH = 90,
    COURIER_CURLE_HTTP2_STREAM = 92,
};

#endif
#endif
