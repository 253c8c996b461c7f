// libcfg.so.7 over librtotem's node control (rtotem_node_addresses, rtotem_shutdown*,
// rtotem_kill_node, rtotem_reload, rtotem_reopen_logs). Node status comes from the key store, as
// `rtotemctl list` shows it: a node is one of nodelist.node.N, reachable while
// runtime.members.<id>.status is "joined". rtotem runs one link per node: link 0.
#include <corosync/cfg.h>

#include <arpa/inet.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "src/corosync/shim/connection.hpp"
#include "src/corosync/shim/export.hpp"
#include "src/corosync/shim/handle_calls.hpp"

namespace {

using rtotem::corosync::Connection;
using rtotem::corosync::cs_error;
using rtotem::corosync::Service;

struct Cfg {
  Connection connection;
  corosync_cfg_handle_t self = 0;
  corosync_cfg_callbacks_t callbacks{};
};

rtotem::corosync::HandleTable<Cfg>& handles() {
  static auto& table = *new rtotem::corosync::HandleTable<Cfg>;  // see handle_table.hpp: never destroyed
  return table;
}

// Inside rtotem_dispatch, under the mutex: the application's callback runs once it is released.
void shutdown_asked(rtotem_t*, int flags, void* ctx) {
  Cfg& s = *static_cast<Cfg*>(ctx);
  if (s.callbacks.corosync_cfg_shutdown_callback)
    s.connection.defer([&s, flags] {
      s.callbacks.corosync_cfg_shutdown_callback(s.self, static_cast<corosync_cfg_shutdown_flags_t>(flags));
    });
}

// A key's value as text (a string key), or "" if it is absent or not a string.
std::string string_key(rtotem_t* h, const std::string& key) {
  char buf[RTOTEM_KEY_VALUE_MAX + 1];
  size_t len = sizeof buf - 1;
  rtotem_key_type type{};
  if (rtotem_key_get(h, key.c_str(), buf, &len, &type) != 0 || type != RTOTEM_KEY_STRING) return {};
  return std::string(buf, len);
}

// nodelist.node.N's ring0_addr for node `nodeid`; false if the nodelist lacks the node.
// The node's address on `link` (its ringN_addr); false if the nodelist lacks the node.
bool nodelist_address(rtotem_t* h, uint32_t nodeid, std::string& address, unsigned link = 0) {
  struct Find {
    rtotem_t* h;
    uint32_t nodeid;
    std::string prefix;  // "nodelist.node.N." once found
  } find{h, nodeid, {}};
  rtotem_key_list(
      h, "nodelist.node.",
      [](const char* key, const rtotem_key_value* v, void* ctx) {
        auto& f = *static_cast<Find*>(ctx);
        const size_t len = std::strlen(key);
        constexpr std::string_view suffix = ".nodeid";
        if (v->type != RTOTEM_KEY_UINT32 || len < suffix.size() ||
            std::string_view(key + len - suffix.size()) != suffix)
          return 0;
        uint32_t id;
        std::memcpy(&id, v->data, sizeof id);
        if (id != f.nodeid) return 0;
        f.prefix.assign(key, len - suffix.size() + 1);
        return 1;
      },
      &find);
  if (find.prefix.empty()) return false;
  address = string_key(h, find.prefix + "ring" + std::to_string(link) + "_addr");
  return true;
}

void copy_text(char (&out)[CFG_MAX_HOST_LEN], const std::string& text) {
  const size_t n = std::min(text.size(), sizeof out - 1);
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

}  // namespace

CS_EXPORT cs_error_t corosync_cfg_initialize(corosync_cfg_handle_t* handle, const corosync_cfg_callbacks_t* callbacks) {
  if (handle == nullptr) return CS_ERR_INVALID_PARAM;
  auto s = std::make_shared<Cfg>();
  if (callbacks != nullptr) s->callbacks = *callbacks;
  if (cs_error_t rc = s->connection.open(Service::kCfg, nullptr, s.get()); rc != CS_OK) return rc;
  return rtotem::corosync::publish(handles(), std::move(s), handle);
}

CS_EXPORT cs_error_t corosync_cfg_finalize(corosync_cfg_handle_t handle) {
  return rtotem::corosync::finalize(handles(), handle);
}

CS_EXPORT cs_error_t corosync_cfg_fd_get(corosync_cfg_handle_t handle, int32_t* fd) {
  return rtotem::corosync::fd_get(handles(), handle, fd);
}

CS_EXPORT cs_error_t corosync_cfg_dispatch(corosync_cfg_handle_t handle, cs_dispatch_flags_t flags) {
  return rtotem::corosync::dispatch(handles(), handle, flags);
}

CS_EXPORT cs_error_t corosync_cfg_local_get(corosync_cfg_handle_t handle, unsigned int* local_nodeid) {
  auto s = handles().get(handle);
  if (!s) return CS_ERR_BAD_HANDLE;
  if (local_nodeid == nullptr) return CS_ERR_INVALID_PARAM;
  std::lock_guard lock(s->connection.mutex());
  uint32_t id = 0;
  if (const int rc = rtotem_local_nodeid(s->connection.handle(), &id); rc < 0) return cs_error(rc);
  *local_nodeid = id;
  return CS_OK;
}

CS_EXPORT cs_error_t corosync_cfg_get_node_addrs(corosync_cfg_handle_t handle, unsigned int nodeid, size_t max_addrs,
                                                 int* num_addrs, corosync_cfg_node_address_t* addrs) {
  auto s = handles().get(handle);
  if (!s) return CS_ERR_BAD_HANDLE;
  if (num_addrs == nullptr || (addrs == nullptr && max_addrs > 0)) return CS_ERR_INVALID_PARAM;
  rtotem_node_address text[CFG_MAX_LINKS];
  size_t count = 0;
  {
    std::lock_guard lock(s->connection.mutex());
    if (const int rc = rtotem_node_addresses(s->connection.handle(), nodeid, text, CFG_MAX_LINKS, &count); rc < 0)
      return cs_error(rc);
  }
  *num_addrs = static_cast<int>(count);
  for (size_t i = 0; i < count && i < max_addrs; ++i) {
    corosync_cfg_node_address_t& out = addrs[i];
    std::memset(&out, 0, sizeof out);
    sockaddr_in v4{};
    sockaddr_in6 v6{};
    if (inet_pton(AF_INET, text[i].address, &v4.sin_addr) == 1) {
      v4.sin_family = AF_INET;
      std::memcpy(out.address, &v4, sizeof v4);
      out.address_length = sizeof v4;
    } else if (inet_pton(AF_INET6, text[i].address, &v6.sin6_addr) == 1) {
      v6.sin6_family = AF_INET6;
      std::memcpy(out.address, &v6, sizeof v6);
      out.address_length = sizeof v6;
    }  // else family 0: consumers skip it
  }
  return CS_OK;
}

CS_EXPORT cs_error_t corosync_cfg_node_status_get(corosync_cfg_handle_t handle, unsigned int nodeid,
                                                  corosync_cfg_node_status_version_t version, void* node_status) {
  // As Corosync's library: the arguments before the handle.
  if (node_status == nullptr || version != CFG_NODE_STATUS_V1) return CS_ERR_INVALID_PARAM;
  auto s = handles().get(handle);
  if (!s) return CS_ERR_BAD_HANDLE;
  std::lock_guard lock(s->connection.mutex());
  rtotem_t* h = s->connection.handle();
  uint32_t local = 0;
  if (const int rc = rtotem_local_nodeid(h, &local); rc < 0) return cs_error(rc);
  std::string local_address, address;
  if (!nodelist_address(h, nodeid, address) || !nodelist_address(h, local, local_address))
    return CS_ERR_FAILED_OPERATION;  // as Corosync for a node its nodelist lacks
  uint32_t mtu = 0;
  size_t len = sizeof mtu;
  rtotem_key_type type{};
  if (rtotem_key_get(h, "totem.netmtu", &mtu, &len, &type) != 0 || type != RTOTEM_KEY_UINT32) mtu = 0;

  auto& out = *static_cast<corosync_cfg_node_status_v1*>(node_status);
  std::memset(&out, 0, sizeof out);
  out.version = CFG_NODE_STATUS_V1;
  out.nodeid = nodeid;
  const bool joined =
      nodeid == local || string_key(h, "runtime.members." + std::to_string(nodeid) + ".status") == "joined";
  out.reachable = joined ? 1 : 0;
  corosync_knet_link_status_v1& link = out.link_status[0];
  link.enabled = 1;
  link.connected = joined ? 1 : 0;
  link.mtu = mtu;
  copy_text(link.src_ipaddr, local_address);
  copy_text(link.dst_ipaddr, nodeid == local ? local_address : address);
  if (nodeid == local) return CS_OK;  // as Corosync: the local node has link 0 only (its loopback)
  // Several links: each one's own state, as its pings judge it (runtime.links.<link>.<nodeid>.*).
  for (unsigned n = 0; n < std::size(out.link_status); ++n) {
    uint8_t connected = 0;
    size_t size = sizeof connected;
    const std::string key = "runtime.links." + std::to_string(n) + "." + std::to_string(nodeid) + ".connected";
    if (rtotem_key_get(h, key.c_str(), &connected, &size, &type) != 0 || type != RTOTEM_KEY_UINT8) break;
    corosync_knet_link_status_v1& each = out.link_status[n];
    std::string src, dst;
    (void)nodelist_address(h, local, src, n);
    (void)nodelist_address(h, nodeid, dst, n);
    each.enabled = 1;
    each.connected = connected;
    each.mtu = mtu;
    copy_text(each.src_ipaddr, src);
    copy_text(each.dst_ipaddr, dst);
  }
  return CS_OK;
}

// Corosync 2's per-ring status text, which Corosync 3 kept in a form of its own for knet links. No
// consumer we know reads it (corosync-cfgtool uses node_status_get): refused rather than imitated.
CS_EXPORT cs_error_t corosync_cfg_ring_status_get(corosync_cfg_handle_t handle, char*** interface_names, char*** status,
                                                  unsigned int* interface_count) {
  auto s = handles().get(handle);
  if (!s) return CS_ERR_BAD_HANDLE;
  if (interface_names == nullptr || status == nullptr || interface_count == nullptr) return CS_ERR_INVALID_PARAM;
  return CS_ERR_NOT_SUPPORTED;
}

CS_EXPORT cs_error_t corosync_cfg_kill_node(corosync_cfg_handle_t handle, unsigned int nodeid, const char* reason) {
  auto s = handles().get(handle);
  if (!s) return CS_ERR_BAD_HANDLE;
  std::lock_guard lock(s->connection.mutex());
  return cs_error(rtotem_kill_node(s->connection.handle(), nodeid, reason));
}

CS_EXPORT cs_error_t corosync_cfg_trackstart(corosync_cfg_handle_t handle, uint8_t) {
  auto s = handles().get(handle);
  if (!s) return CS_ERR_BAD_HANDLE;
  std::lock_guard lock(s->connection.mutex());
  return cs_error(rtotem_shutdown_track(s->connection.handle(), shutdown_asked));
}

CS_EXPORT cs_error_t corosync_cfg_trackstop(corosync_cfg_handle_t handle) {
  auto s = handles().get(handle);
  if (!s) return CS_ERR_BAD_HANDLE;
  std::lock_guard lock(s->connection.mutex());
  return cs_error(rtotem_shutdown_track(s->connection.handle(), nullptr));
}

CS_EXPORT cs_error_t corosync_cfg_try_shutdown(corosync_cfg_handle_t handle, corosync_cfg_shutdown_flags_t flags) {
  auto s = handles().get(handle);
  if (!s) return CS_ERR_BAD_HANDLE;
  if (flags < COROSYNC_CFG_SHUTDOWN_FLAG_REQUEST || flags > COROSYNC_CFG_SHUTDOWN_FLAG_IMMEDIATE)
    return CS_ERR_INVALID_PARAM;
  std::lock_guard lock(s->connection.mutex());
  return cs_error(rtotem_shutdown(s->connection.handle(), flags));
}

CS_EXPORT cs_error_t corosync_cfg_replyto_shutdown(corosync_cfg_handle_t handle,
                                                   corosync_cfg_shutdown_reply_flags_t flags) {
  auto s = handles().get(handle);
  if (!s) return CS_ERR_BAD_HANDLE;
  std::lock_guard lock(s->connection.mutex());
  const int rc = rtotem_shutdown_reply(s->connection.handle(), flags == COROSYNC_CFG_SHUTDOWN_FLAG_YES ? 1 : 0);
  return rc == -ENOENT ? CS_ERR_ACCESS : cs_error(rc);  // Corosync's answer when no shutdown is asked
}

CS_EXPORT cs_error_t corosync_cfg_reload_config(corosync_cfg_handle_t handle) {
  auto s = handles().get(handle);
  if (!s) return CS_ERR_BAD_HANDLE;
  std::lock_guard lock(s->connection.mutex());
  return cs_error(rtotem_reload(s->connection.handle(), nullptr, 0));
}

CS_EXPORT cs_error_t corosync_cfg_reopen_log_files(corosync_cfg_handle_t handle) {
  auto s = handles().get(handle);
  if (!s) return CS_ERR_BAD_HANDLE;
  std::lock_guard lock(s->connection.mutex());
  return cs_error(rtotem_reopen_logs(s->connection.handle()));
}
