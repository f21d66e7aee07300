//! A PE's place in its team: which PE it is, of how many, which GPU it opens, and who started
//! it, read from the environment its process was started with.
//!
//! The first of these that applies decides:
//!
//! 1. [`PE_VAR`], [`N_PES_VAR`] and [`RENDEZVOUS_VAR`]: a PE that [`run_local`](super::run_local)
//!    started. They come first because run_local's PEs inherit the variables of whatever
//!    launcher started their parent.
//! 2. [`LAUNCHER_VAR`]: `none` reads no launcher (the process is not a PE, and `Team::cuda`
//!    starts a team of its own); `openmpi`, `pmi` or `slurm` reads that launcher's variables
//!    alone; `auto`, empty or unset reads the launchers below, in this order.
//! 3. Open MPI's `mpirun`: `OMPI_COMM_WORLD_RANK`, `OMPI_COMM_WORLD_SIZE`,
//!    `OMPI_COMM_WORLD_LOCAL_RANK`.
//! 4. A PMI process manager (Hydra's `mpiexec` of MPICH and Intel MPI, NVSHMEM's `nvshmrun`,
//!    Cray PALS, `srun --mpi=pmi2`): `PMI_RANK`, `PMI_SIZE`, and the local rank from
//!    `MPI_LOCALRANKID` (Hydra) or `PMI_LOCAL_RANK` (Cray), else from `SLURM_LOCALID` where
//!    Slurm's rank and size are PMI's (srun sets PMI's variables beside its own).
//! 5. Slurm's `srun`: `SLURM_PROCID`, `SLURM_STEP_NUM_TASKS`, `SLURM_LOCALID`. The size is the
//!    job step's: `SLURM_NTASKS` and `SLURM_PROCID` are in a batch script's environment too,
//!    which srun did not start as a task, and `srun --preserve-env` keeps the allocation's
//!    `SLURM_NTASKS`.
//!
//! The launchers are read innermost first: `mpirun` and `mpiexec` in a Slurm job start their
//! ranks through daemons that srun started, and the ranks inherit those daemons' Slurm
//! variables. Under a launcher the PE is the rank, the team's size the number of processes it
//! started, and the GPU the rank on this node.

use std::ffi::OsString;
use std::fmt::Display;
use std::path::{Path, PathBuf};

use crate::core::error::{Error, Result};

/// The PE's number, from 0, in a team that [`run_local`](super::run_local) started; the PE opens
/// the GPU of that ordinal.
pub const PE_VAR: &str = "GSYNC_TEAM_PE";
/// The team's size, in a team that [`run_local`](super::run_local) started.
pub const N_PES_VAR: &str = "GSYNC_TEAM_N_PES";
/// The file through which PE 0 hands NVSHMEM's unique id to the others.
pub const RENDEZVOUS_VAR: &str = "GSYNC_TEAM_RENDEZVOUS";
/// Which launcher's variables are read: `auto` (the default), `none`, `openmpi`, `pmi` or
/// `slurm`.
pub const LAUNCHER_VAR: &str = "GSYNC_TEAM_LAUNCHER";

/// A launcher whose processes are PEs, one each, read from its variables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Launcher {
    /// Open MPI's `mpirun` (or `mpiexec`, `oshrun`).
    OpenMpi,
    /// A PMI process manager: Hydra's `mpiexec` (MPICH, Intel MPI), NVSHMEM's `nvshmrun`, Cray
    /// PALS, or `srun --mpi=pmi2`.
    Pmi,
    /// Slurm's `srun`.
    Slurm,
}

impl Launcher {
    /// The launchers in the order their variables are read: innermost first.
    pub const PRECEDENCE: [Launcher; 3] = [Launcher::OpenMpi, Launcher::Pmi, Launcher::Slurm];

    /// How messages name it.
    pub fn name(self) -> &'static str {
        match self {
            Launcher::OpenMpi => "Open MPI's mpirun",
            Launcher::Pmi => "a PMI launcher (Hydra's mpiexec, nvshmrun)",
            Launcher::Slurm => "Slurm's srun",
        }
    }

    /// Its value of [`LAUNCHER_VAR`].
    pub fn keyword(self) -> &'static str {
        match self {
            Launcher::OpenMpi => "openmpi",
            Launcher::Pmi => "pmi",
            Launcher::Slurm => "slurm",
        }
    }

    /// The variable that holds this process's rank.
    pub fn rank_var(self) -> &'static str {
        match self {
            Launcher::OpenMpi => "OMPI_COMM_WORLD_RANK",
            Launcher::Pmi => "PMI_RANK",
            Launcher::Slurm => "SLURM_PROCID",
        }
    }

    /// The variable that holds how many processes it started.
    pub fn size_var(self) -> &'static str {
        match self {
            Launcher::OpenMpi => "OMPI_COMM_WORLD_SIZE",
            Launcher::Pmi => "PMI_SIZE",
            Launcher::Slurm => "SLURM_STEP_NUM_TASKS",
        }
    }

    /// The variable whose presence says that it started this process: the rank, except for
    /// Slurm, whose rank a batch script has too.
    fn presence_var(self) -> &'static str {
        match self {
            Launcher::Slurm => self.size_var(),
            _ => self.rank_var(),
        }
    }

    /// The command that starts `n` processes with it on one node.
    pub fn start_command(self, n: impl Display) -> String {
        match self {
            Launcher::OpenMpi => format!("mpirun -np {n} <program>"),
            Launcher::Pmi => format!("nvshmrun -n {n} <program>` or `mpiexec -n {n} <program>"),
            Launcher::Slurm => format!("srun -N 1 -n {n} <program>"),
        }
    }

    /// The settings of NVSHMEM's bootstrap that reach the processes it starts.
    pub fn bootstrap_advice(self) -> &'static str {
        match self {
            Launcher::OpenMpi => {
                "under mpirun set NVSHMEM_BOOTSTRAP=MPI (NVSHMEM then loads Open MPI's libmpi.so.40, which must be \
                 on LD_LIBRARY_PATH), or NVSHMEM_BOOTSTRAP_PMI=PMIX (libpmix.so.2 on LD_LIBRARY_PATH)"
            }
            Launcher::Pmi => {
                "Hydra's mpiexec and nvshmrun serve NVSHMEM's default bootstrap (NVSHMEM_BOOTSTRAP=PMI with \
                 NVSHMEM_BOOTSTRAP_PMI=PMI, PMI-1): leave both unset; under srun --mpi=pmi2 set \
                 NVSHMEM_BOOTSTRAP_PMI=PMI-2"
            }
            Launcher::Slurm => {
                "under srun set NVSHMEM_BOOTSTRAP_PMI=PMIX and start with srun --mpi=pmix (libpmix.so.2 on \
                 LD_LIBRARY_PATH), or NVSHMEM_BOOTSTRAP_PMI=PMI-2 and start with srun --mpi=pmi2"
            }
        }
    }

    /// This process's place as the launcher's variables give it, `None` when it did not start
    /// this process.
    fn place(self, var: &impl Fn(&str) -> Option<OsString>) -> Option<Result<TeamEnv>> {
        var(self.presence_var())?;
        Some(self.read(var))
    }

    /// This process's place from the launcher's variables, which name it as started by it.
    fn read(self, var: &impl Fn(&str) -> Option<OsString>) -> Result<TeamEnv> {
        let number = |name: &str| var(name).map(|value| self.whole_number(name, &value)).transpose();
        let required = |name: &str| {
            number(name)?
                .ok_or_else(|| self.error(name, "", format!("it is unset while {} is set", self.presence_var()), "N"))
        };
        let (pe, n_pes) = (required(self.rank_var())?, required(self.size_var())?);
        if n_pes == 0 || pe >= n_pes {
            let reason =
                format!("{}={n_pes}, and a launch of {n_pes} has ranks 0 to {}", self.size_var(), n_pes.max(1) - 1);
            return Err(self.error(self.rank_var(), &pe.to_string(), reason, n_pes));
        }
        let gpu = self.local_rank(var, &number, pe, n_pes)?;
        let multi_node = self.multi_node(&number, n_pes)?;
        Ok(TeamEnv { pe, n_pes, gpu, multi_node, origin: TeamOrigin::Launcher(self) })
    }

    /// The process's rank on this node, which is the GPU it opens.
    fn local_rank(
        self,
        var: &impl Fn(&str) -> Option<OsString>,
        number: &impl Fn(&str) -> Result<Option<u32>>,
        pe: u32,
        n_pes: u32,
    ) -> Result<u32> {
        let names: &[&str] = match self {
            Launcher::OpenMpi => &["OMPI_COMM_WORLD_LOCAL_RANK"],
            Launcher::Pmi => &["MPI_LOCALRANKID", "PMI_LOCAL_RANK"],
            Launcher::Slurm => &["SLURM_LOCALID"],
        };
        if let Some(local) = first_number(number, names)? {
            return Ok(local);
        }
        if self == Launcher::Pmi {
            // srun --mpi=pmi2 sets PMI_RANK and PMI_SIZE, and no local rank of PMI's, beside
            // its own variables; those of another launch (a Slurm job's daemons) do not count.
            let slurm = |name: &str| var(name).and_then(|value| parse_whole_number(&value).ok());
            let same_launch = slurm("SLURM_PROCID") == Some(pe) && slurm("SLURM_STEP_NUM_TASKS") == Some(n_pes);
            if let Some(local) = slurm("SLURM_LOCALID").filter(|_| same_launch) {
                return Ok(local);
            }
        }
        let reason = format!(
            "{} is unset while {} is set, so this process's rank on its node, which chooses its GPU, is unknown",
            names.join(" and "),
            self.presence_var()
        );
        Err(self.error(names[0], "", reason, n_pes))
    }

    /// Whether the launch spans more than one node, where the launcher says.
    fn multi_node(self, number: &impl Fn(&str) -> Result<Option<u32>>, n_pes: u32) -> Result<Option<bool>> {
        let local_size = |names: &[&str]| Ok(first_number(number, names)?.map(|here| here < n_pes));
        match self {
            Launcher::OpenMpi => local_size(&["OMPI_COMM_WORLD_LOCAL_SIZE"]),
            Launcher::Pmi => local_size(&["MPI_LOCALNRANKS", "PMI_LOCAL_SIZE"]),
            Launcher::Slurm => Ok(number("SLURM_STEP_NUM_NODES")?.map(|nodes| nodes > 1)),
        }
    }

    fn whole_number(self, name: &str, value: &OsString) -> Result<u32> {
        parse_whole_number(value).map_err(|text| self.error(name, &text, "it is not a whole number".into(), "N"))
    }

    /// [`Error::TeamSettings`] for one of its variables, saying how to start the program.
    fn error(self, variable: &str, value: &str, reason: String, n: impl Display) -> Error {
        Error::TeamSettings {
            variable: variable.to_owned(),
            value: value.to_owned(),
            reason: format!(
                "{reason}; {} sets it for each process it starts: start the program with `{}`, or set \
                 {LAUNCHER_VAR}=none to read no launcher and have Team::cuda start the team itself on this node",
                self.name(),
                self.start_command(n)
            ),
        }
    }
}

/// Who started this process as a PE, and so how NVSHMEM bootstraps.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TeamOrigin {
    /// [`run_local`](super::run_local): PE 0 hands NVSHMEM's unique id to the others through the
    /// file `rendezvous`.
    Local {
        /// The rendezvous file for [`NvshmemPe::init`](super::NvshmemPe::init).
        rendezvous: PathBuf,
    },
    /// A launcher: NVSHMEM's own bootstrap, as `NVSHMEM_BOOTSTRAP` chooses it.
    Launcher(Launcher),
}

/// What a process learns from its environment about the team it is a PE of (see the module's
/// documentation for which variables are read, and in which order).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TeamEnv {
    /// This process's PE, from 0.
    pub pe: u32,
    /// The team's size.
    pub n_pes: u32,
    /// The ordinal of the GPU this PE opens: its PE under run_local, its rank on this node under
    /// a launcher.
    pub gpu: u32,
    /// Whether the team's PEs run on more than one node, where the launcher says (run_local's
    /// never do); `None` where it does not say.
    pub multi_node: Option<bool>,
    /// Who started this process.
    pub origin: TeamOrigin,
}

impl TeamEnv {
    /// The team this process is a PE of: `None` when it is none (no variable of run_local's or
    /// of a launcher's is set, or `GSYNC_TEAM_LAUNCHER` is `none`), an error when a variable is
    /// missing or malformed.
    pub fn from_env() -> Option<Result<TeamEnv>> {
        TeamEnv::from_vars(|name| std::env::var_os(name))
    }

    /// [`from_env`](Self::from_env) over the variables `var` looks up.
    pub(crate) fn from_vars(var: impl Fn(&str) -> Option<OsString>) -> Option<Result<TeamEnv>> {
        if let Some(pe) = var(PE_VAR) {
            return Some(TeamEnv::local(pe, var(N_PES_VAR), var(RENDEZVOUS_VAR)));
        }
        match read_choice(var(LAUNCHER_VAR)) {
            Err(error) => Some(Err(error)),
            Ok(Choice::Nothing) => None,
            Ok(Choice::Auto) => Launcher::PRECEDENCE.into_iter().find_map(|launcher| launcher.place(&var)),
            Ok(Choice::Only(launcher)) => Some(launcher.place(&var).unwrap_or_else(|| {
                let reason = format!("{LAUNCHER_VAR}={}, but {} is unset", launcher.keyword(), launcher.presence_var());
                Err(launcher.error(launcher.presence_var(), "", reason, "N"))
            })),
        }
    }

    /// A PE of run_local's, from its three variables.
    fn local(pe: OsString, n_pes: Option<OsString>, rendezvous: Option<OsString>) -> Result<TeamEnv> {
        let number = |variable: &str, value: Option<OsString>| -> Result<u32> {
            let value = value.ok_or_else(|| local_error(variable, "", format!("it is unset while {PE_VAR} is set")))?;
            parse_whole_number(&value).map_err(|text| local_error(variable, &text, "it is not a whole number".into()))
        };
        let (pe, n_pes) = (number(PE_VAR, Some(pe))?, number(N_PES_VAR, n_pes)?);
        if n_pes == 0 || pe >= n_pes {
            return Err(local_error(
                PE_VAR,
                &pe.to_string(),
                format!("a team of {n_pes} has PEs 0 to {}", n_pes.max(1) - 1),
            ));
        }
        let rendezvous = rendezvous
            .filter(|path| !path.is_empty())
            .ok_or_else(|| local_error(RENDEZVOUS_VAR, "", format!("it is unset while {PE_VAR} is set")))?;
        let origin = TeamOrigin::Local { rendezvous: PathBuf::from(rendezvous) };
        Ok(TeamEnv { pe, n_pes, gpu: pe, multi_node: Some(false), origin })
    }

    /// The launcher that started this process, `None` under run_local.
    pub fn launcher(&self) -> Option<Launcher> {
        match self.origin {
            TeamOrigin::Launcher(launcher) => Some(launcher),
            TeamOrigin::Local { .. } => None,
        }
    }

    /// The rendezvous file of a PE that run_local started, `None` under a launcher.
    pub fn rendezvous(&self) -> Option<&Path> {
        match &self.origin {
            TeamOrigin::Local { rendezvous } => Some(rendezvous),
            TeamOrigin::Launcher(_) => None,
        }
    }

    /// How messages name whoever started this process.
    pub fn started_by(&self) -> &'static str {
        self.launcher().map_or("gsync's run_local", Launcher::name)
    }

    /// `Ok` when the program's team of `asked` PEs is the one this process was started into:
    /// else [`Error::InvalidTeam`] under run_local, [`Error::LaunchSizeMismatch`] naming both
    /// sizes and the launcher under one.
    pub fn check_size(&self, asked: u32) -> Result<()> {
        if self.n_pes == asked {
            return Ok(());
        }
        Err(match self.launcher() {
            None => Error::InvalidTeam {
                reason: format!(
                    "this process is PE {} of a team of {}, but the program asks for a team of {asked}",
                    self.pe, self.n_pes
                ),
            },
            Some(launcher) => Error::LaunchSizeMismatch {
                launcher: launcher.name(),
                size_var: launcher.size_var(),
                launched: self.n_pes,
                asked,
                command: launcher.start_command(asked),
            },
        })
    }

    /// `error`, from looking for this PE's GPU, said in the terms of the launcher that chose
    /// the GPU: a process that does not see the GPU of its rank on the node.
    pub(crate) fn explain_missing_gpu(&self, error: Error) -> Error {
        match (self.launcher(), &error) {
            (Some(launcher), Error::NoSuchGpu { ordinal, count }) => Error::InvalidTeam {
                reason: format!(
                    "{} started this process as rank {ordinal} on its node, which opens GPU {ordinal}, but the \
                     process sees {count} GPU(s): every process of a team must see every GPU of the node, in the \
                     same order, and a node runs at most as many ranks as it has GPUs; do not give each rank a \
                     CUDA_VISIBLE_DEVICES of its own (srun --gpus-per-task, a wrapper script), and start at most \
                     {count} ranks per node",
                    launcher.name()
                ),
            },
            _ => error,
        }
    }
}

/// What [`LAUNCHER_VAR`] asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Choice {
    /// The launchers in [`Launcher::PRECEDENCE`].
    Auto,
    /// No launcher.
    Nothing,
    /// This launcher alone.
    Only(Launcher),
}

/// What `value`, the value of [`LAUNCHER_VAR`], asks for.
fn read_choice(value: Option<OsString>) -> Result<Choice> {
    let Some(value) = value else { return Ok(Choice::Auto) };
    let text = value.to_string_lossy();
    let keyword = text.trim().to_ascii_lowercase();
    match keyword.as_str() {
        "" | "auto" => Ok(Choice::Auto),
        "none" => Ok(Choice::Nothing),
        _ => Launcher::PRECEDENCE
            .into_iter()
            .find(|launcher| launcher.keyword() == keyword)
            .map(Choice::Only)
            .ok_or_else(|| Error::TeamSettings {
                variable: LAUNCHER_VAR.into(),
                value: text.into_owned(),
                reason: "it is none of auto, none, openmpi, pmi and slurm".into(),
            }),
    }
}

/// The value of the first of `names` that is set.
fn first_number(number: &impl Fn(&str) -> Result<Option<u32>>, names: &[&str]) -> Result<Option<u32>> {
    for name in names {
        if let Some(value) = number(name)? {
            return Ok(Some(value));
        }
    }
    Ok(None)
}

/// The whole number `value` holds, or its text.
fn parse_whole_number(value: &OsString) -> std::result::Result<u32, String> {
    let text = value.to_string_lossy();
    text.trim().parse().map_err(|_| text.into_owned())
}

/// [`Error::TeamSettings`] for one of run_local's variables.
pub(super) fn local_error(variable: &str, value: &str, reason: String) -> Error {
    Error::TeamSettings {
        variable: variable.to_owned(),
        value: value.to_owned(),
        reason: format!(
            "{reason}; start the PEs with run_local, which sets {PE_VAR}, {N_PES_VAR} and {RENDEZVOUS_VAR}"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fabricated environment: `NAME=value` words, a value without spaces.
    fn vars(text: &'static str) -> impl Fn(&str) -> Option<OsString> {
        move |name| {
            text.split_whitespace()
                .filter_map(|word| word.split_once('='))
                .find(|(var, _)| *var == name)
                .map(|(_, value)| OsString::from(value))
        }
    }

    fn place(text: &'static str) -> Option<Result<TeamEnv>> {
        TeamEnv::from_vars(vars(text))
    }

    fn pe(text: &'static str) -> TeamEnv {
        place(text).expect("a PE").expect("well-formed")
    }

    fn launched(launcher: Launcher, pe: u32, n_pes: u32, gpu: u32, multi_node: Option<bool>) -> TeamEnv {
        TeamEnv { pe, n_pes, gpu, multi_node, origin: TeamOrigin::Launcher(launcher) }
    }

    /// The variable a malformed environment's error names, and its reason.
    fn refusal(text: &'static str) -> (String, String) {
        match place(text) {
            Some(Err(Error::TeamSettings { variable, reason, .. })) => (variable, reason),
            other => panic!("{text}: expected TeamSettings, got {other:?}"),
        }
    }

    const OPEN_MPI: &str = "OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_LOCAL_RANK=1";
    const SRUN_ALONE: &str = "SLURM_PROCID=0 SLURM_STEP_NUM_TASKS=1 SLURM_LOCALID=0";

    #[test]
    fn a_process_without_the_team_variables_is_no_pe() {
        assert!(place("").is_none());
        assert!(place("PATH=/bin SLURM_JOB_ID=7").is_none());
    }

    #[test]
    fn the_team_variables_are_read() {
        let env = pe("GSYNC_TEAM_PE=1 GSYNC_TEAM_N_PES=2 GSYNC_TEAM_RENDEZVOUS=/tmp/x");
        let origin = TeamOrigin::Local { rendezvous: PathBuf::from("/tmp/x") };
        assert_eq!(env, TeamEnv { pe: 1, n_pes: 2, gpu: 1, multi_node: Some(false), origin });
        assert_eq!((env.launcher(), env.rendezvous()), (None, Some(Path::new("/tmp/x"))));
    }

    #[test]
    fn malformed_team_variables_are_errors_naming_the_variable() {
        let cases = [
            (PE_VAR, "GSYNC_TEAM_PE=one GSYNC_TEAM_N_PES=2 GSYNC_TEAM_RENDEZVOUS=/x"),
            (N_PES_VAR, "GSYNC_TEAM_PE=0 GSYNC_TEAM_RENDEZVOUS=/x"),
            (PE_VAR, "GSYNC_TEAM_PE=2 GSYNC_TEAM_N_PES=2 GSYNC_TEAM_RENDEZVOUS=/x"),
            (RENDEZVOUS_VAR, "GSYNC_TEAM_PE=0 GSYNC_TEAM_N_PES=2"),
        ];
        for (variable, case) in cases {
            let (named, reason) = refusal(case);
            assert_eq!(named, variable, "{case}");
            assert!(reason.contains("run_local"), "{reason}");
        }
    }

    #[test]
    fn every_launcher_s_rank_size_and_local_rank_are_the_pe_the_team_size_and_the_gpu() {
        use Launcher::{OpenMpi, Pmi, Slurm};
        let cases = [
            // Open MPI's mpirun, over 2 nodes by its local size, then alone.
            (
                launched(OpenMpi, 5, 8, 1, Some(true)),
                "OMPI_COMM_WORLD_RANK=5 OMPI_COMM_WORLD_SIZE=8 OMPI_COMM_WORLD_LOCAL_RANK=1 \
                 OMPI_COMM_WORLD_LOCAL_SIZE=4",
            ),
            (
                launched(OpenMpi, 0, 1, 0, None),
                "OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=1 OMPI_COMM_WORLD_LOCAL_RANK=0",
            ),
            // Hydra's mpiexec and nvshmrun.
            (launched(Pmi, 2, 4, 2, Some(false)), "PMI_RANK=2 PMI_SIZE=4 PMI_FD=7 MPI_LOCALRANKID=2 MPI_LOCALNRANKS=4"),
            // Cray PALS; Hydra's local rank comes first where both are set.
            (launched(Pmi, 3, 4, 1, Some(true)), "PMI_RANK=3 PMI_SIZE=4 PMI_LOCAL_RANK=1 PMI_LOCAL_SIZE=2"),
            (launched(Pmi, 3, 4, 3, None), "PMI_RANK=3 PMI_SIZE=4 MPI_LOCALRANKID=3 PMI_LOCAL_RANK=1"),
            // srun: the job step's size, not the allocation's SLURM_NTASKS.
            (
                launched(Slurm, 3, 4, 3, Some(false)),
                "SLURM_PROCID=3 SLURM_STEP_NUM_TASKS=4 SLURM_NTASKS=16 SLURM_LOCALID=3 SLURM_STEP_NUM_NODES=1",
            ),
            (
                launched(Slurm, 5, 8, 1, Some(true)),
                "SLURM_PROCID=5 SLURM_STEP_NUM_TASKS=8 SLURM_LOCALID=1 SLURM_STEP_NUM_NODES=2",
            ),
        ];
        for (expected, case) in cases {
            assert_eq!(pe(case), expected, "{case}");
        }
        assert_eq!((pe(OPEN_MPI).rendezvous(), pe(OPEN_MPI).started_by()), (None, "Open MPI's mpirun"));
    }

    #[test]
    fn a_slurm_batch_script_is_no_pe() {
        // sbatch's script has a rank and the allocation's task count, but srun did not start it.
        assert!(place("SLURM_JOB_ID=7 SLURM_PROCID=0 SLURM_LOCALID=0 SLURM_NTASKS=4").is_none());
    }

    #[test]
    fn srun_with_pmi2_takes_the_local_rank_from_slurm_when_slurm_s_launch_is_pmi_s() {
        let srun = "PMI_RANK=1 PMI_SIZE=2 PMI_FD=5 SLURM_PROCID=1 SLURM_STEP_NUM_TASKS=2 SLURM_LOCALID=1";
        assert_eq!(pe(srun), launched(Launcher::Pmi, 1, 2, 1, None));
        // A Slurm daemon's variables, inherited by a PMI launch it started, are another launch's.
        let (variable, reason) = refusal("PMI_RANK=1 PMI_SIZE=4 SLURM_PROCID=0 SLURM_STEP_NUM_TASKS=1 SLURM_LOCALID=0");
        assert_eq!(variable, "MPI_LOCALRANKID");
        assert!(reason.contains("MPI_LOCALRANKID and PMI_LOCAL_RANK is unset"), "{reason}");
    }

    #[test]
    fn the_innermost_launcher_is_read_first() {
        // mpirun and mpiexec in a Slurm job: their ranks inherit the Slurm variables of a daemon.
        let mpirun =
            "OMPI_COMM_WORLD_RANK=3 OMPI_COMM_WORLD_SIZE=4 OMPI_COMM_WORLD_LOCAL_RANK=3 PMI_RANK=2 PMI_SIZE=4 \
                      MPI_LOCALRANKID=2 SLURM_PROCID=0 SLURM_STEP_NUM_TASKS=1 SLURM_LOCALID=0";
        assert_eq!(pe(mpirun), launched(Launcher::OpenMpi, 3, 4, 3, None));
        let mpiexec = "PMI_RANK=2 PMI_SIZE=4 MPI_LOCALRANKID=2 SLURM_PROCID=0 SLURM_STEP_NUM_TASKS=1 SLURM_LOCALID=0";
        assert_eq!(pe(mpiexec), launched(Launcher::Pmi, 2, 4, 2, None));
    }

    #[test]
    fn run_local_s_variables_come_before_any_launcher_s() {
        let env = pe("GSYNC_TEAM_PE=1 GSYNC_TEAM_N_PES=2 GSYNC_TEAM_RENDEZVOUS=/tmp/x GSYNC_TEAM_LAUNCHER=slurm \
                      SLURM_PROCID=0 SLURM_STEP_NUM_TASKS=1 SLURM_LOCALID=0");
        assert_eq!((env.pe, env.n_pes, env.launcher()), (1, 2, None));
    }

    #[test]
    fn gsync_team_launcher_reads_no_launcher_or_one_alone() {
        let srun_in_mpirun = |choice: &str| {
            let text = format!("{OPEN_MPI} {SRUN_ALONE} GSYNC_TEAM_LAUNCHER={choice}");
            TeamEnv::from_vars(vars(String::leak(text)))
        };
        assert!(srun_in_mpirun("none").is_none());
        assert!(srun_in_mpirun("None").is_none());
        let launcher = |choice| srun_in_mpirun(choice).expect("a PE").expect("well-formed").launcher();
        assert_eq!(launcher("slurm"), Some(Launcher::Slurm));
        assert_eq!(launcher("openmpi"), Some(Launcher::OpenMpi));
        assert_eq!(launcher("auto"), Some(Launcher::OpenMpi));
        assert_eq!(launcher(""), Some(Launcher::OpenMpi));
        let (variable, reason) = refusal("GSYNC_TEAM_LAUNCHER=pmi SLURM_PROCID=0");
        assert_eq!(variable, "PMI_RANK");
        assert!(reason.contains("GSYNC_TEAM_LAUNCHER=pmi, but PMI_RANK is unset"), "{reason}");
        let (variable, reason) = refusal("GSYNC_TEAM_LAUNCHER=slurm SLURM_PROCID=0");
        assert_eq!(variable, "SLURM_STEP_NUM_TASKS", "{reason}");
        let (variable, reason) = refusal("GSYNC_TEAM_LAUNCHER=mpich");
        assert_eq!(variable, LAUNCHER_VAR);
        assert!(reason.contains("none of auto, none, openmpi, pmi and slurm"), "{reason}");
    }

    #[test]
    fn malformed_launcher_variables_are_errors_naming_the_variable_the_launcher_and_the_way_out() {
        let cases = [
            ("OMPI_COMM_WORLD_RANK", "mpirun", "OMPI_COMM_WORLD_RANK=x OMPI_COMM_WORLD_SIZE=2"),
            ("OMPI_COMM_WORLD_SIZE", "mpirun", "OMPI_COMM_WORLD_RANK=0"),
            ("OMPI_COMM_WORLD_RANK", "mpirun -np 4", "OMPI_COMM_WORLD_RANK=4 OMPI_COMM_WORLD_SIZE=4"),
            ("OMPI_COMM_WORLD_LOCAL_RANK", "mpirun", "OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=2"),
            (
                "OMPI_COMM_WORLD_LOCAL_SIZE",
                "mpirun",
                "OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_LOCAL_RANK=0 \
                 OMPI_COMM_WORLD_LOCAL_SIZE=many",
            ),
            ("PMI_SIZE", "nvshmrun", "PMI_RANK=0 PMI_SIZE=-1 MPI_LOCALRANKID=0"),
            ("PMI_RANK", "nvshmrun", "PMI_RANK=0 PMI_SIZE=0 MPI_LOCALRANKID=0"),
            ("SLURM_PROCID", "srun", "SLURM_STEP_NUM_TASKS=2 SLURM_LOCALID=0"),
            ("SLURM_LOCALID", "srun", "SLURM_PROCID=1 SLURM_STEP_NUM_TASKS=2 SLURM_LOCALID=one"),
        ];
        for (expected, command, case) in cases {
            let (variable, reason) = refusal(case);
            assert_eq!(variable, expected, "{case}: {reason}");
            assert!(reason.contains(command), "{case}: {reason}");
            assert!(reason.contains("GSYNC_TEAM_LAUNCHER=none"), "{case}: {reason}");
        }
    }

    #[test]
    fn a_team_size_other_than_the_launch_s_is_a_typed_error_naming_both_and_the_launcher() {
        let env = pe(SRUN_ALONE);
        assert!(env.check_size(1).is_ok());
        let error = env.check_size(4).expect_err("1 launched, 4 asked for");
        let message = error.to_string();
        assert!(
            matches!(error, Error::LaunchSizeMismatch { launched: 1, asked: 4, size_var: "SLURM_STEP_NUM_TASKS", .. }),
            "{message}"
        );
        for part in ["Slurm's srun started 1 process", "SLURM_STEP_NUM_TASKS=1", "Team::cuda(4)", "srun -N 1 -n 4"] {
            assert!(message.contains(part), "{part}: {message}");
        }
        assert!(message.contains("GSYNC_TEAM_LAUNCHER=none"), "{message}");
        let local = pe("GSYNC_TEAM_PE=0 GSYNC_TEAM_N_PES=2 GSYNC_TEAM_RENDEZVOUS=/x");
        assert!(matches!(local.check_size(3), Err(Error::InvalidTeam { .. })));
    }

    #[test]
    fn a_gpu_the_process_does_not_see_is_explained_in_the_launcher_s_terms() {
        let message = pe(OPEN_MPI).explain_missing_gpu(Error::NoSuchGpu { ordinal: 1, count: 1 }).to_string();
        assert!(message.contains("rank 1 on its node, which opens GPU 1"), "{message}");
        assert!(message.contains("CUDA_VISIBLE_DEVICES"), "{message}");
        let local = pe("GSYNC_TEAM_PE=1 GSYNC_TEAM_N_PES=2 GSYNC_TEAM_RENDEZVOUS=/x");
        let error = local.explain_missing_gpu(Error::NoSuchGpu { ordinal: 1, count: 1 });
        assert!(matches!(error, Error::NoSuchGpu { .. }));
    }
}
