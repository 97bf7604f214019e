// SPDX-License-Identifier: GPL-2.0-only

//! The `sm` file in debugfs: which port the subnet manager runs on.
//!
//! On a real fabric the SM brings every port up and writes its own LID into each port's
//! PortInfo (SMLID), which `/sys/class/infiniband/*/ports/*/sm_lid` shows and where clients
//! send Subnet Administration queries. opasim has no SM of its own; the SA of its test tools
//! (`opasim-sa`) runs on a port over umad and claims the role here:
//!
//! - reading gives `opasim0 1 lid 0x1` (the SM's port and its LID now), or `none`;
//! - writing `DEVICE PORT` makes that port the SM's, `none` leaves the fabric without one.
//!
//! A LID change of the SM's port is seen by every port at once, as the SM would tell them:
//! every port raises `IB_EVENT_SM_CHANGE` when the SM LID it reports changes.

use crate::{
    control::{parse_num, words},
    sim::Sim,
};
use core::fmt::Write;
use kernel::{
    c_str,
    debugfs::{File, FileOps, Text},
    debugfs_file_operations,
    prelude::*,
    sync::Arc,
};

debugfs_file_operations!(static SM_FILE_OPS: SmFile);

/// The `sm` file.
pub(crate) struct SmFile {
    sim: Arc<Sim>,
}

impl SmFile {
    /// Creates the `sm` file of `sim`.
    pub(crate) fn create(sim: &Arc<Sim>) -> Result<File<Self>> {
        let data = Arc::new(SmFile { sim: sim.clone() }, GFP_KERNEL)?;
        File::new(&SM_FILE_OPS, sim.root(), c_str!("sm"), 0o644, data)
    }
}

impl FileOps for SmFile {
    fn show(&self, out: &mut KVec<u8>) -> Result {
        let fabric = &self.sim.fabric;
        let Some((dev, num)) = fabric.sm_port() else {
            out.extend_from_slice(b"none\n", GFP_KERNEL)?;
            return Ok(());
        };
        if self.sim.device_name(dev, out).is_err() {
            // The SM's device was removed: the fabric has no SM until one is set again.
            out.extend_from_slice(b"none", GFP_KERNEL)?;
        }
        let _ = writeln!(Text(out), " {} lid {:#x}", num, fabric.sm_lid());
        Ok(())
    }

    fn store(&self, input: &[u8]) -> Result {
        let ws: KVec<&[u8]> = {
            let mut v = KVec::new();
            for w in words(input) {
                v.push(w, GFP_KERNEL)?;
            }
            v
        };
        match ws.as_slice() {
            [b"none"] => {
                self.sim.set_sm(None);
                Ok(())
            }
            [dev, num] => {
                let num = parse_num(num).ok_or(EINVAL)?;
                let index = self.sim.port_index(dev, num).inspect_err(|_| {
                    pr_warn!("sm: no such device or port\n");
                })?;
                self.sim.set_sm(Some((index, num)));
                Ok(())
            }
            _ => {
                pr_warn!("sm: write 'DEVICE PORT' or 'none'\n");
                Err(EINVAL)
            }
        }
    }
}
