// SPDX-License-Identifier: GPL-2.0-only
// Imports control.rs and is imported by it: the Sim owns each device's files, which act on it.

//! The simulated devices: creating, configuring and removing them, at load time and at run
//! time (through the debugfs files of [`crate::control`]).

use crate::{
    control::{self, PortFile},
    fabric::Fabric,
    hfi::{Hfi, HfiDevice},
    port::{Port, PortConfig, PKEY_TABLE_LEN},
};
use kernel::{
    c_str,
    debugfs::{Dir, File},
    fmt, new_mutex,
    prelude::*,
    rdma::{device::DeviceName, provider::Registration},
    root_device::RootDevice,
    str::CString,
    sync::{Arc, Mutex},
};

/// The most ports of one device.
pub(crate) const MAX_DEVICE_PORTS: u32 = 8;

/// The largest unicast LID the simulation hands out or accepts.
pub(crate) const MAX_LID: u32 = 0xbfff;

/// A P_Key table holding `keys` first, the rest empty.
const fn pkey_table(keys: &[u16]) -> [u16; PKEY_TABLE_LEN] {
    let mut t = [0; PKEY_TABLE_LEN];
    let mut i = 0;
    while i < keys.len() {
        t[i] = keys[i];
        i += 1;
    }
    t
}

/// hfi1's P_Key table after reset (`hfi1_init_pportdata()`): 0x8001 at index 0 and the
/// limited management P_Key (`DEFAULT_P_KEY`, which `common.h` defines as `LIM_MGMT_P_KEY`)
/// at `default_pkey_idx`, 1. The ports of a managed fabric start with it, and the SM
/// programs the rest, as on hardware.
pub(crate) const RESET_PKEYS: [u16; PKEY_TABLE_LEN] = pkey_table(&[0x8001, 0x7fff]);

/// The P_Key table of the ports of a fabric without SM, where nothing programs it: what an
/// SM gives a node of the management partition: its full membership, the default partition
/// 0x8001, and the limited management P_Key, which opamgt (Debian's OPA admin tools) needs
/// in the table to open a port.
pub(crate) const UNMANAGED_PKEYS: [u16; PKEY_TABLE_LEN] = pkey_table(&[0xffff, 0x8001, 0x7fff]);

/// The P_Key table of a new port, unless the `pkeys` module parameter says otherwise.
pub(crate) fn default_pkeys(managed: bool) -> &'static [u16; PKEY_TABLE_LEN] {
    if managed {
        &RESET_PKEYS
    } else {
        &UNMANAGED_PKEYS
    }
}

/// The node GUID of device `index`, which is also its port 1's GUID, as on hfi1 (`chip.c`:
/// the port's GUID is the node's).
pub(crate) fn device_guid(index: u32) -> u64 {
    0x0011_7501_0000_0001 | (u64::from(index) << 8)
}

/// The GUID of port `n` of the node `node_guid`: bits 30-31 hold the port number minus one,
/// so that the SM's spoofing check (opa-ff's `NodeGUIDtoPortGUID()`) holds.
pub(crate) fn port_guid(node_guid: u64, n: u32) -> u64 {
    (node_guid & !(3 << 30)) | ((u64::from(n.saturating_sub(1)) & 3) << 30)
}

/// A device of the simulation: its debugfs files, its registration, the device it is
/// registered under; its ports are attached to the switch.
pub(crate) struct SimDevice {
    files: KVec<File<PortFile>>,
    dir: Option<Dir>,
    reg: Option<Registration<Hfi>>,
    /// `/sys/devices/opasim-hfi<index>`: the IB device's parent, where hfi1's is its PCI
    /// device (`hfi1_register_ib_device()` in `verbs.c` sets `ibdev->dev.parent`). The ULPs
    /// name it (the C opa_vnic's `ethtool -i` takes its name unchecked).
    parent: Option<RootDevice>,
    index: u32,
    fabric: Arc<Fabric>,
}

impl SimDevice {
    /// The device's name (`opasim0`); empty once unregistered.
    pub(crate) fn name(&self) -> DeviceName {
        self.reg
            .as_ref()
            .map_or_else(DeviceName::default, |r| r.device().name())
    }

    fn data(&self) -> Option<&HfiDevice> {
        self.reg.as_ref().map(|r| r.device().data())
    }
}

impl Drop for SimDevice {
    fn drop(&mut self) {
        // The files first (no more configuration), then unregister: the clients stop using
        // the ports before they leave the switch.
        self.files = KVec::new();
        drop(self.dir.take());
        drop(self.reg.take());
        drop(self.parent.take());
        let index = self.index;
        self.fabric.detach_where(|p| p.dev_index == index);
    }
}

struct SimState {
    devices: KVec<Option<SimDevice>>,
    next_index: u32,
}

/// The simulation: the switch and the devices on it.
#[pin_data]
pub(crate) struct Sim {
    module: &'static ThisModule,
    /// The switch.
    pub(crate) fabric: Arc<Fabric>,
    root: Dir,
    #[pin]
    state: Mutex<SimState>,
}

/// What a port setting changes, for the events the IB core's clients get.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
    Lid,
    Pkeys,
    State,
}

impl Sim {
    /// An empty simulation, with its debugfs directory `root`.
    /// `managed`: the switch is a node the SM programs, and ports come up without a LID.
    pub(crate) fn new(module: &'static ThisModule, root: Dir, managed: bool) -> Result<Arc<Self>> {
        let fabric = Fabric::with_mode(managed)?;
        Arc::pin_init(
            pin_init!(Self {
                module,
                fabric,
                root,
                state <- new_mutex!(
                    SimState {
                        devices: KVec::new(),
                        next_index: 0,
                    },
                    "opasim_devices"
                ),
            }),
            GFP_KERNEL,
        )
    }

    /// The debugfs directory of the simulation.
    pub(crate) fn root(&self) -> &Dir {
        &self.root
    }

    /// Adds a device of `nports` ports with the LIDs `lids` (free ones picked for missing
    /// entries) and the P_Key table `pkeys`; writes its name to `out`.
    pub(crate) fn add_device(
        self: &Arc<Self>,
        nports: u32,
        lids: &[u32],
        pkeys: &[u16; PKEY_TABLE_LEN],
        out: &mut KVec<u8>,
    ) -> Result {
        if nports == 0 || nports > MAX_DEVICE_PORTS || lids.len() > nports as usize {
            pr_warn!(
                "add: a device has 1 to {} ports, and a LID per port at most\n",
                MAX_DEVICE_PORTS
            );
            return Err(EINVAL);
        }
        if self.fabric.managed && !lids.is_empty() {
            pr_warn!("add: the subnet manager assigns the LIDs of a managed fabric\n");
            return Err(EINVAL);
        }
        let mut st = self.state.lock();
        let mut configs = KVec::with_capacity(nports as usize, GFP_KERNEL)?;
        for _ in 0..nports as usize {
            if self.fabric.managed {
                // The link is up; the SM gives the LID and brings the port to Active.
                let mut c = PortConfig::new(0, pkeys);
                c.state = kernel::rdma::provider::PortState::Init;
                configs.push(c, GFP_KERNEL)?;
                continue;
            }
            let i = configs.len();
            let lid = match lids.get(i) {
                Some(&l) => {
                    self.check_lid(l, None)?;
                    if configs.iter().any(|c: &PortConfig| c.lid == l) {
                        pr_warn!("add: LID {} given twice\n", l);
                        return Err(EEXIST);
                    }
                    l
                }
                None => (1..=MAX_LID)
                    .find(|&l| {
                        !self.fabric.lid_in_use(l, None)
                            && !configs.iter().any(|c: &PortConfig| c.lid == l)
                            && !lids.contains(&l)
                    })
                    .ok_or(ENOSPC)?,
            };
            configs.push(PortConfig::new(lid, pkeys), GFP_KERNEL)?;
        }
        let index = st.next_index;
        let dev = self.new_device(index, &configs)?;
        st.next_index += 1;
        let _ = out.extend_from_slice(dev.name().as_bytes(), GFP_KERNEL);
        pr_info!(
            "{}: {} port(s), LID {}{}\n",
            dev.name(),
            nports,
            configs[0].lid,
            if nports > 1 { " and up" } else { "" }
        );
        match st.devices.iter_mut().find(|d| d.is_none()) {
            Some(slot) => *slot = Some(dev),
            None => st.devices.push(Some(dev), GFP_KERNEL)?,
        }
        Ok(())
    }

    /// Creates, registers and publishes (in debugfs) device `index`.
    fn new_device(self: &Arc<Self>, index: u32, configs: &[PortConfig]) -> Result<SimDevice> {
        let guid = device_guid(index);
        let mut ports = KVec::with_capacity(configs.len(), GFP_KERNEL)?;
        for (i, c) in (1u32..).zip(configs) {
            ports.push(Port::new(index, i, port_guid(guid, i), *c)?, GFP_KERNEL)?;
        }
        // From here on, dropping `dev` undoes whatever was done.
        let mut dev = SimDevice {
            files: KVec::new(),
            dir: None,
            reg: None,
            parent: None,
            index,
            fabric: self.fabric.clone(),
        };
        for p in ports.iter() {
            self.fabric.attach(p.clone())?;
        }
        let data = HfiDevice::new(guid, self.fabric.clone(), ports);
        let nports = u32::try_from(configs.len())?;
        let name = CString::try_from_fmt(fmt!("opasim-hfi{index}"))?;
        let parent = dev.parent.insert(RootDevice::new(&name, self.module)?);
        dev.reg = Some(Registration::new(
            self.module,
            c_str!("opasim%d"),
            Some(parent.device()),
            nports,
            guid,
            data,
        )?);
        let dir = Dir::new(&dev.name(), Some(&self.root))?;
        let ports: KVec<Arc<Port>> = {
            let mut v = KVec::new();
            for p in dev.data().map(|d| d.ports.iter()).into_iter().flatten() {
                v.push(p.clone(), GFP_KERNEL)?;
            }
            v
        };
        for p in ports.iter() {
            control::port_files(self, &dir, index, p, &mut dev.files)?;
        }
        dev.dir = Some(dir);
        Ok(dev)
    }

    /// Checks that `lid` is a unicast LID no port other than `except` has.
    fn check_lid(&self, lid: u32, except: Option<&Port>) -> Result {
        if lid == 0 || lid > MAX_LID {
            pr_warn!("LID {} is not a unicast LID (1 to {:#x})\n", lid, MAX_LID);
            return Err(EINVAL);
        }
        if self.fabric.lid_in_use(lid, except) {
            pr_warn!("LID {} is in use by another port\n", lid);
            return Err(EEXIST);
        }
        Ok(())
    }

    /// Removes the device named `name`.
    pub(crate) fn del_device(&self, name: &[u8]) -> Result {
        let dev = {
            let mut st = self.state.lock();
            let slot = st
                .devices
                .iter_mut()
                .find(|d| d.as_ref().is_some_and(|d| d.name().as_bytes() == name))
                .ok_or_else(|| {
                    pr_warn!("del: no such device\n");
                    ENODEV
                })?;
            slot.take()
        };
        // Dropped without the lock: removing its files waits for their writers, which may be
        // waiting for the lock.
        if let Some(d) = dev {
            pr_info!("{}: removed\n", d.name());
        }
        Ok(())
    }

    /// The index of the device named `name`, if it has a port `num`.
    pub(crate) fn port_index(&self, name: &[u8], num: u32) -> Result<u32> {
        let st = self.state.lock();
        let dev = st
            .devices
            .iter()
            .flatten()
            .find(|d| d.name().as_bytes() == name)
            .ok_or(ENODEV)?;
        let nports = dev.data().map_or(0, |d| d.ports.len());
        if num == 0 || num as usize > nports {
            return Err(EINVAL);
        }
        Ok(dev.index)
    }

    /// The name of the device of index `index`, written to `out`.
    pub(crate) fn device_name(&self, index: u32, out: &mut KVec<u8>) -> Result {
        let st = self.state.lock();
        let dev = st
            .devices
            .iter()
            .flatten()
            .find(|d| d.index == index)
            .ok_or(ENODEV)?;
        out.extend_from_slice(dev.name().as_bytes(), GFP_KERNEL)?;
        Ok(())
    }

    /// Removes every device.
    pub(crate) fn clear(&self) {
        let devices = core::mem::take(&mut self.state.lock().devices);
        drop(devices);
    }

    /// Writes one line per device: its name, index and the LID of each port.
    pub(crate) fn list(&self, out: &mut KVec<u8>) -> Result {
        use core::fmt::Write;
        let st = self.state.lock();
        let mut w = kernel::debugfs::Text(out);
        for d in st.devices.iter().flatten() {
            let _ = write!(
                w,
                "{} index {} lids",
                d.name().to_str().unwrap_or("?"),
                d.index
            );
            for p in d.data().map(|d| d.ports.iter()).into_iter().flatten() {
                let _ = write!(w, " {}", p.config().lid);
            }
            let _ = writeln!(w);
        }
        Ok(())
    }

    /// Changes the configuration of `port` of device `dev_index` with `f`, after checking the
    /// new configuration, and tells the IB core's clients.
    pub(crate) fn configure(
        &self,
        dev_index: u32,
        port: &Port,
        what: Change,
        f: impl FnOnce(&mut PortConfig),
    ) -> Result {
        let st = self.state.lock();
        let dev = st
            .devices
            .iter()
            .flatten()
            .find(|d| d.index == dev_index)
            .ok_or(ENODEV)?;
        let old = port.config();
        let mut new = old;
        f(&mut new);
        if new.lid != old.lid {
            self.check_lid(new.lid, Some(port))?;
        }
        if new.pkeys.iter().all(|&p| p == 0) || new.pkeys.len() != PKEY_TABLE_LEN {
            return Err(EINVAL);
        }
        let sm_lid = self.fabric.sm_lid();
        port.set_config(new);
        if let Some(reg) = &dev.reg {
            let d = reg.device();
            match what {
                Change::Lid => d.lid_event(port.num),
                Change::Pkeys => d.pkey_event(port.num),
                // As hfi1: an event when the link changes state (`handle_linkup_change()`,
                // `set_link_state()`), none for a write that changes nothing.
                Change::State if new.state != old.state => d.port_event(port.num, new.active()),
                Change::State => {}
            }
        }
        // The SM's port changing its LID or going down changes what every port sees.
        Self::sm_events(&st, sm_lid, self.fabric.sm_lid());
        Ok(())
    }

    /// Makes port `num` of device `dev_index` the subnet manager's, or none
    /// ([`Fabric::set_sm`]), and tells the clients of every port when the SM LID they see
    /// changes.
    pub(crate) fn set_sm(&self, sm: Option<(u32, u32)>) {
        let st = self.state.lock();
        let sm_lid = self.fabric.sm_lid();
        self.fabric.set_sm(sm);
        Self::sm_events(&st, sm_lid, self.fabric.sm_lid());
    }

    /// Raises `IB_EVENT_SM_CHANGE` on every port of every device if the SM LID went from
    /// `before` to something else (`after`), as a real SM's new SMLID in each port's
    /// PortInfo does on hfi1.
    fn sm_events(st: &SimState, before: u32, after: u32) {
        if before == after {
            return;
        }
        for reg in st.devices.iter().flatten().filter_map(|d| d.reg.as_ref()) {
            let d = reg.device();
            for port in 1..=d.port_count() {
                d.sm_event(port);
            }
        }
    }
}
