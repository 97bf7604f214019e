// SPDX-License-Identifier: GPL-2.0
// expect: E0308
//! A netdev cannot be unregistered from its own callbacks, which get the token of RTNL and
//! not its guard: the core goes on with the netdev when the callback returns, and
//! `dev_close()` would call `ndo_stop` for ever.
use kernel::net::rtnl::Rtnl;
use kernel::rdma::netdev::{UlpNetdev, VnicUlp};

/// What the type refuses: what a `stopped` callback holding its own netdev would do.
pub fn unregister_in_callback<T: VnicUlp>(me: UlpNetdev<T>, rtnl: &Rtnl) {
    me.unregister(rtnl);
}
