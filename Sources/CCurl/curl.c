// See include/CCurl.h. Each function forwards to the libcurl symbol loaded by courier_curl_load;
// the cookie jar at the end adds the locking that libcurl's share interface asks for.
#ifdef __linux__
#include "CCurl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <netinet/in.h>
#include <sys/socket.h>

typedef struct {
    int msg;
    courier_curl_easy *easy_handle;
    union {
        void *whatever;
        int result;
    } data;
} courier_curl_message;

static struct {
    int (*global_init)(long);
    char *(*version)(void);
    courier_curl_easy *(*easy_init)(void);
    void (*easy_cleanup)(courier_curl_easy *);
    void (*easy_reset)(courier_curl_easy *);
    int (*easy_perform)(courier_curl_easy *);
    int (*easy_setopt)(courier_curl_easy *, int, ...);
    int (*easy_getinfo)(courier_curl_easy *, int, ...);
    int (*easy_pause)(courier_curl_easy *, int);
    int (*easy_send)(courier_curl_easy *, const void *, size_t, size_t *);
    int (*easy_recv)(courier_curl_easy *, void *, size_t, size_t *);
    const char *(*easy_strerror)(int);
    courier_curl_slist *(*slist_append)(courier_curl_slist *, const char *);
    void (*slist_free_all)(courier_curl_slist *);
    courier_curl_multi *(*multi_init)(void);
    int (*multi_cleanup)(courier_curl_multi *);
    int (*multi_setopt)(courier_curl_multi *, int, ...);
    int (*multi_add_handle)(courier_curl_multi *, courier_curl_easy *);
    int (*multi_remove_handle)(courier_curl_multi *, courier_curl_easy *);
    int (*multi_perform)(courier_curl_multi *, int *);
    int (*multi_poll)(courier_curl_multi *, void *, unsigned int, int, int *);
    int (*multi_wakeup)(courier_curl_multi *);
    courier_curl_message *(*multi_info_read)(courier_curl_multi *, int *);
    courier_curl_share *(*share_init)(void);
    int (*share_setopt)(courier_curl_share *, int, ...);
    int (*share_cleanup)(courier_curl_share *);
} curl;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int load_result = -1;
static char load_error[256];

#define LOAD(field, name)                                                                      \
    do {                                                                                       \
        *(void **)(&curl.field) = dlsym(library, name);                                        \
        if (curl.field == NULL) {                                                              \
            snprintf(load_error, sizeof load_error, "libcurl.so.4 has no %s", name);           \
            return;                                                                            \
        }                                                                                      \
    } while (0)

static void load(void) {
    void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        snprintf(load_error, sizeof load_error, "%s", dlerror());
        return;
    }
    LOAD(global_init, "curl_global_init");
    LOAD(version, "curl_version");
    LOAD(easy_init, "curl_easy_init");
    LOAD(easy_cleanup, "curl_easy_cleanup");
    LOAD(easy_reset, "curl_easy_reset");
    LOAD(easy_perform, "curl_easy_perform");
    LOAD(easy_setopt, "curl_easy_setopt");
    LOAD(easy_getinfo, "curl_easy_getinfo");
    LOAD(easy_pause, "curl_easy_pause");
    LOAD(easy_send, "curl_easy_send");
    LOAD(easy_recv, "curl_easy_recv");
    LOAD(easy_strerror, "curl_easy_strerror");
    LOAD(slist_append, "curl_slist_append");
    LOAD(slist_free_all, "curl_slist_free_all");
    LOAD(multi_init, "curl_multi_init");
    LOAD(multi_cleanup, "curl_multi_cleanup");
    LOAD(multi_setopt, "curl_multi_setopt");
    LOAD(multi_add_handle, "curl_multi_add_handle");
    LOAD(multi_remove_handle, "curl_multi_remove_handle");
    LOAD(multi_perform, "curl_multi_perform");
    LOAD(multi_poll, "curl_multi_poll");
    LOAD(multi_wakeup, "curl_multi_wakeup");
    LOAD(multi_info_read, "curl_multi_info_read");
    LOAD(share_init, "curl_share_init");
    LOAD(share_setopt, "curl_share_setopt");
    LOAD(share_cleanup, "curl_share_cleanup");
    // CURL_GLOBAL_ALL (SSL | WIN32).
    if (curl.global_init(3) != 0) {
        snprintf(load_error, sizeof load_error, "curl_global_init failed");
        return;
    }
    load_result = 0;
}

int courier_curl_load(void) {
    pthread_once(&load_once, load);
    return load_result;
}

const char *courier_curl_load_error(void) { return load_result == 0 ? NULL : load_error; }
const char *courier_curl_version(void) { return curl.version(); }

courier_curl_easy *courier_curl_easy_init(void) { return curl.easy_init(); }
void courier_curl_easy_cleanup(courier_curl_easy *easy) { curl.easy_cleanup(easy); }
void courier_curl_easy_reset(courier_curl_easy *easy) { curl.easy_reset(easy); }
int courier_curl_easy_perform(courier_curl_easy *easy) { return curl.easy_perform(easy); }
int courier_curl_easy_send(courier_curl_easy *easy, const void *buffer, size_t length, size_t *sent) {
    return curl.easy_send(easy, buffer, length, sent);
}
int courier_curl_easy_recv(courier_curl_easy *easy, void *buffer, size_t length, size_t *received) {
    return curl.easy_recv(easy, buffer, length, received);
}
int courier_curl_setopt_long(courier_curl_easy *easy, int option, long value) {
    return curl.easy_setopt(easy, option, value);
}
int courier_curl_setopt_pointer(courier_curl_easy *easy, int option, const void *value) {
    return curl.easy_setopt(easy, option, value);
}
int courier_curl_setopt_offset(courier_curl_easy *easy, int option, int64_t value) {
    return curl.easy_setopt(easy, option, value);
}
int courier_curl_setopt_function(courier_curl_easy *easy, int option, void (*function)(void)) {
    return curl.easy_setopt(easy, option, function);
}
int courier_curl_getinfo_long(courier_curl_easy *easy, int info, long *value) {
    return curl.easy_getinfo(easy, info, value);
}
int courier_curl_getinfo_offset(courier_curl_easy *easy, int info, int64_t *value) {
    return curl.easy_getinfo(easy, info, value);
}
void courier_curl_read_facts(courier_curl_easy *easy, courier_curl_facts *facts) {
    if (curl.easy_getinfo(easy, COURIER_CURLINFO_POSTTRANSFER_TIME_T, &facts->post_transfer_us) != 0)
        facts->post_transfer_us = -1;
    if (curl.easy_getinfo(easy, COURIER_CURLINFO_NUM_CONNECTS, &facts->new_connections) != 0)
        facts->new_connections = -1;
    if (curl.easy_getinfo(easy, COURIER_CURLINFO_REQUEST_SIZE, &facts->request_header_bytes) != 0)
        facts->request_header_bytes = -1;
    if (curl.easy_getinfo(easy, COURIER_CURLINFO_HEADER_SIZE, &facts->response_header_bytes) != 0)
        facts->response_header_bytes = -1;
    if (curl.easy_getinfo(easy, COURIER_CURLINFO_SIZE_UPLOAD_T, &facts->uploaded) != 0) facts->uploaded = -1;
    if (curl.easy_getinfo(easy, COURIER_CURLINFO_SIZE_DOWNLOAD_T, &facts->downloaded) != 0) facts->downloaded = -1;
    if (curl.easy_getinfo(easy, COURIER_CURLINFO_PRIMARY_PORT, &facts->primary_port) != 0) facts->primary_port = -1;
    if (curl.easy_getinfo(easy, COURIER_CURLINFO_PRIMARY_IP, &facts->primary_ip) != 0) facts->primary_ip = 0;
}
const char *courier_curl_easy_strerror(int code) { return curl.easy_strerror(code); }
int courier_curl_easy_pause(courier_curl_easy *easy, int bitmask) { return curl.easy_pause(easy, bitmask); }

int courier_curl_last_socket(courier_curl_easy *easy) {
    int socket = -1;  // curl_socket_t is an int on Linux
    if (curl.easy_getinfo(easy, COURIER_CURLINFO_ACTIVESOCKET, &socket) != 0) return -1;
    return socket;
}

static int port_of(struct sockaddr_storage *address) {
    if (address->ss_family == AF_INET) return ntohs(((struct sockaddr_in *)address)->sin_port);
    if (address->ss_family == AF_INET6) return ntohs(((struct sockaddr_in6 *)address)->sin6_port);
    return -1;
}

int courier_socket_discard_if_unread(int socket, int local_port, int peer_port) {
    struct sockaddr_storage local, peer;
    socklen_t local_length = sizeof local, peer_length = sizeof peer;
    // The descriptor may have been closed and reused since: it must still be that connection.
    if (getsockname(socket, (struct sockaddr *)&local, &local_length) != 0 || port_of(&local) != local_port) return 0;
    if (getpeername(socket, (struct sockaddr *)&peer, &peer_length) != 0 || port_of(&peer) != peer_port) return 0;
    char byte;
    if (recv(socket, &byte, 1, MSG_PEEK | MSG_DONTWAIT) <= 0) return 0;
    // Dead from now on: libcurl closes it instead of keeping it for another request.
    shutdown(socket, SHUT_RDWR);
    return 1;
}

courier_curl_slist *courier_curl_slist_append(courier_curl_slist *list, const char *line) {
    return curl.slist_append(list, line);
}
void courier_curl_slist_free_all(courier_curl_slist *list) { curl.slist_free_all(list); }

courier_curl_multi *courier_curl_multi_init(void) { return curl.multi_init(); }
int courier_curl_multi_cleanup(courier_curl_multi *multi) { return curl.multi_cleanup(multi); }
int courier_curl_multi_setopt_long(courier_curl_multi *multi, int option, long value) {
    return curl.multi_setopt(multi, option, value);
}
int courier_curl_multi_add_handle(courier_curl_multi *multi, courier_curl_easy *easy) {
    return curl.multi_add_handle(multi, easy);
}
int courier_curl_multi_remove_handle(courier_curl_multi *multi, courier_curl_easy *easy) {
    return curl.multi_remove_handle(multi, easy);
}
int courier_curl_multi_perform(courier_curl_multi *multi, int *running) {
    return curl.multi_perform(multi, running);
}
int courier_curl_multi_poll(courier_curl_multi *multi, int timeout_ms) {
    return curl.multi_poll(multi, NULL, 0, timeout_ms, NULL);
}
int courier_curl_multi_wakeup(courier_curl_multi *multi) { return curl.multi_wakeup(multi); }

int courier_curl_multi_next_done(courier_curl_multi *multi, courier_curl_easy **easy, int *result) {
    int left = 0;
    courier_curl_message *message;
    while ((message = curl.multi_info_read(multi, &left)) != NULL) {
        if (message->msg == 1) {  // CURLMSG_DONE
            *easy = message->easy_handle;
            *result = message->data.result;
            return 1;
        }
    }
    return 0;
}

// A cookie jar is a share handle holding libcurl's cookie store. Easy handles using it may be
// set up on one thread while the loop thread runs others, so libcurl locks it through these
// callbacks; one recursive mutex covers every kind of shared data.
typedef struct {
    pthread_mutex_t mutex;
    courier_curl_share *share;
} cookie_jar;

// CURLSHOPT_* and curl_lock_data numbers (curl.h).
enum { share_share = 1, share_lock = 3, share_unlock = 4, share_user_data = 5, lock_data_cookie = 2 };

static void jar_lock(courier_curl_easy *easy, int data, int access, void *user) {
    (void)easy;
    (void)data;
    (void)access;
    pthread_mutex_lock(&((cookie_jar *)user)->mutex);
}

static void jar_unlock(courier_curl_easy *easy, int data, void *user) {
    (void)easy;
    (void)data;
    pthread_mutex_unlock(&((cookie_jar *)user)->mutex);
}

courier_curl_cookie_jar *courier_curl_cookie_jar_create(void) {
    cookie_jar *jar = calloc(1, sizeof *jar);
    if (jar == NULL) return NULL;
    jar->share = curl.share_init();
    if (jar->share == NULL) {
        free(jar);
        return NULL;
    }
    pthread_mutexattr_t attributes;
    pthread_mutexattr_init(&attributes);
    pthread_mutexattr_settype(&attributes, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&jar->mutex, &attributes);
    pthread_mutexattr_destroy(&attributes);
    curl.share_setopt(jar->share, share_user_data, (void *)jar);
    curl.share_setopt(jar->share, share_lock, jar_lock);
    curl.share_setopt(jar->share, share_unlock, jar_unlock);
    curl.share_setopt(jar->share, share_share, lock_data_cookie);
    return (courier_curl_cookie_jar *)jar;
}

int courier_curl_cookie_jar_use(courier_curl_easy *easy, courier_curl_cookie_jar *jar) {
    int result = curl.easy_setopt(easy, COURIER_CURLOPT_SHARE, ((cookie_jar *)jar)->share);
    // An empty file name starts the cookie engine without reading any file.
    return result != 0 ? result : curl.easy_setopt(easy, COURIER_CURLOPT_COOKIEFILE, "");
}

int courier_curl_cookie_jar_destroy(courier_curl_cookie_jar *jar) {
    cookie_jar *inner = (cookie_jar *)jar;
    if (curl.share_cleanup(inner->share) != 0) return -1;  // CURLSHE_IN_USE
    pthread_mutex_destroy(&inner->mutex);
    free(inner);
    return 0;
}
#endif
