//! Host mode for C++ programs: the one build path a C++ host program with `<<<...>>>` launches
//! takes, whether CMake's ASC language drives it (`find_package(ASC)` in the emulator root), CANN's
//! `ascendc_library()` stand-in does, or a shell calls the `ascendc-host-cc` driver directly.
//!
//! [`Compiler::compile`] turns one source — a single-source `.asc` program (kernels and host
//! code, `main` included) or a `.cpp` kernel file with host-side wrappers — into one relocatable
//! object that carries its own kernel binary:
//!
//! 1. the source, its launches rewritten, with its kernels registered (the crate's `unit`
//!    module), is compiled once for the host against the AscendC host layer;
//! 2. that object and a kernel table are linked into a kernel binary (a shared object holding
//!    only what the kernels reach: host code is dropped, so the binary needs no runtime library);
//! 3. the binary is embedded (`.incbin`) and joined to the object (`ld -r`).
//!
//! The program links such objects with the runtime library (`-lacl_rt`, the emulator's C
//! library in the emulator root): on its first launch a unit loads its embedded binary through
//! `aclrtBinaryLoadFromData`, and every launch is `aclrtKernelArgs*` plus
//! `aclrtLaunchKernelWithConfig` on the launch's stream (`include/ascendc_host/acl_launch.h`).
//! [`link_args`] are the arguments that link a program.

use crate::parse;
use crate::unit::{self, Hook};
use crate::{Error, include_dir, write};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The names of AscendC's documented API (basic and advanced), to tell a kernel that calls one
/// the host layer lacks from any other compile error.
const API_NAMES: &str = include_str!("api_names.txt");

/// A compiler for C++ programs' sources in host mode.
#[derive(Debug, Clone)]
pub struct Compiler {
    cxx: OsString,
    host_include: PathBuf,
    acl_include: Option<PathBuf>,
    flags: Vec<OsString>,
    npu_arch: u32,
    instantiations: Vec<String>,
    work_dir: Option<PathBuf>,
}

impl Default for Compiler {
    fn default() -> Self {
        Compiler::new()
    }
}

/// What [`Compiler::compile`] produced.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Compiled {
    /// The relocatable object (host code, kernels and the embedded kernel binary).
    pub object: PathBuf,
    /// The kernel binary embedded in it (kept in the work directory).
    pub binary: PathBuf,
    /// Things in the source the build could not use.
    pub notes: Vec<String>,
}

impl Compiler {
    /// A compiler using `$CXX` (else `c++`) and this crate's host layer.
    pub fn new() -> Self {
        Compiler {
            cxx: std::env::var_os("CXX")
                .filter(|c| !c.is_empty())
                .unwrap_or_else(|| "c++".into()),
            host_include: include_dir(),
            acl_include: None,
            flags: Vec::new(),
            npu_arch: 2201,
            instantiations: Vec::new(),
            work_dir: None,
        }
    }

    /// The host C++ compiler.
    pub fn cxx(&mut self, cxx: impl AsRef<OsStr>) -> &mut Self {
        self.cxx = cxx.as_ref().to_os_string();
        self
    }

    /// The directory of the host layer (`kernel_operator.h`); default [`include_dir`].
    pub fn host_include(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.host_include = dir.as_ref().to_path_buf();
        self
    }

    /// The directory holding `acl/acl.h` (the runtime's headers the launch glue includes).
    pub fn acl_include(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.acl_include = Some(dir.as_ref().to_path_buf());
        self
    }

    /// A flag for the compilation of the source (`-I`, `-D`, `-O2`, `-g`, `-std=`, dependency
    /// file flags...).
    pub fn flag(&mut self, flag: impl AsRef<OsStr>) -> &mut Self {
        self.flags.push(flag.as_ref().to_os_string());
        self
    }

    /// The NPU architecture the source is compiled for (`__NPU_ARCH__`): 2201 (A2/A3, the
    /// default) or 3510 (Ascend 950).
    pub fn npu_arch(&mut self, arch: u32) -> &mut Self {
        self.npu_arch = arch;
        self
    }

    /// Gives a template instantiation (`add_custom<float>`) an entry under that name.
    pub fn instantiate(&mut self, expr: &str) -> &mut Self {
        self.instantiations.push(expr.to_string());
        self
    }

    /// Where the intermediate files go (default: `<object>.host/`).
    pub fn work_dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.work_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Compiles `source` into the relocatable object `object`.
    pub fn compile(&self, source: &Path, object: &Path) -> Result<Compiled, Error> {
        let text = std::fs::read_to_string(source)
            .map_err(|e| Error::new(format!("cannot read {}: {e}", source.display())))?;
        let path = source
            .canonicalize()
            .unwrap_or_else(|_| source.to_path_buf());
        let scan = parse::scan(&text);
        let notes = scan
            .notes
            .iter()
            .map(|n| format!("{}: {n}", source.display()))
            .collect();
        let src = unit::Source {
            shown: source.to_path_buf(),
            path: path.clone(),
            text,
            scan,
        };
        let work = match &self.work_dir {
            Some(d) => d.clone(),
            None => {
                let mut name = object.file_name().unwrap_or_default().to_os_string();
                name.push(".host");
                object.with_file_name(name)
            }
        };
        std::fs::create_dir_all(&work)
            .map_err(|e| Error::new(format!("cannot create {}: {e}", work.display())))?;
        let id = unit_id(&path, object);
        let hook = Hook::Program;
        let [launch, begin, end] = unit::glue_symbols(&id);

        let unit_cpp = work.join("unit.cpp");
        write(
            &unit_cpp,
            &unit::host_unit(&src, &hook, &self.instantiations),
        )?;
        let table_cpp = work.join("table.cpp");
        write(&table_cpp, &unit::binary_table(&hook))?;

        // (1) The source.
        let unit_o = work.join("unit.o");
        let mut cmd = Command::new(&self.cxx);
        if !self
            .flags
            .iter()
            .any(|f| f.to_string_lossy().starts_with("-std="))
        {
            cmd.arg("-std=c++17");
        }
        cmd.args(host_flags()).arg("-I").arg(&self.host_include);
        if let Some(acl) = &self.acl_include {
            cmd.arg("-I").arg(acl);
        }
        if let Some(dir) = path.parent() {
            cmd.arg("-iquote").arg(dir);
        }
        cmd.arg("-DASCENDC_HOST=1")
            .arg(format!("-D__NPU_ARCH__={}", self.npu_arch))
            .arg(format!("-DASCENDC_HOST_GLUE_LAUNCH={launch}"))
            .arg(format!("-DASCENDC_HOST_BLOB_BEGIN={begin}"))
            .arg(format!("-DASCENDC_HOST_BLOB_END={end}"))
            .args(&self.flags)
            .arg("-x")
            .arg("c++")
            .arg("-c")
            .arg(&unit_cpp)
            .arg("-o")
            .arg(&unit_o);
        run_compiler(&mut cmd, source)?;
        if let Some(dep) = depfile(&self.flags) {
            fix_depfile(&dep, &unit_cpp, &path);
        }

        // (2) The kernel binary.
        let table_o = work.join("table.o");
        let mut cmd = Command::new(&self.cxx);
        cmd.arg("-std=c++17")
            .arg("-fPIC")
            .arg("-I")
            .arg(&self.host_include)
            .arg("-c")
            .arg(&table_cpp)
            .arg("-o")
            .arg(&table_o);
        run_compiler(&mut cmd, &table_cpp)?;
        let binary = work.join("kernels.so");
        let mut cmd = Command::new(&self.cxx);
        cmd.args(unit::shared_link_flags(cfg!(target_os = "macos")))
            .arg("-o")
            .arg(&binary)
            .arg(&unit_o)
            .arg(&table_o)
            .arg("-pthread");
        run_tool(&mut cmd, "linking the kernel binary")?;

        // (3) The object that carries it.
        let blob_s = work.join("blob.s");
        write(&blob_s, &blob_asm(&begin, &end, &binary))?;
        let blob_o = work.join("blob.o");
        let mut cmd = Command::new(&self.cxx);
        cmd.arg("-c").arg(&blob_s).arg("-o").arg(&blob_o);
        run_tool(&mut cmd, "assembling the embedded kernel binary")?;
        let mut cmd = Command::new(&self.cxx);
        cmd.arg("-r")
            .arg("-nostdlib")
            .arg("-o")
            .arg(object)
            .arg(&unit_o)
            .arg(&blob_o);
        run_tool(&mut cmd, "joining the kernel binary to the object")?;
        Ok(Compiled {
            object: object.to_path_buf(),
            binary,
            notes,
        })
    }
}

/// The flags of every host-mode compilation of a program's source: position-independent code
/// (the same object goes into the program and its kernel binary), a section per function (the
/// kernel binary keeps only what its kernels reach), hidden symbols (only the table leaves it).
fn host_flags() -> [&'static str; 6] {
    [
        "-fPIC",
        "-pthread",
        "-ffunction-sections",
        "-fdata-sections",
        "-fvisibility=hidden",
        "-fvisibility-inlines-hidden",
    ]
}

/// The arguments that link a program's objects with the runtime library of the install at
/// `root` (`<root>/lib64/libacl_rt.so`): the library directory, its run path, the library and
/// what the host layer uses.
pub fn link_args(root: &Path) -> Vec<OsString> {
    let lib = root.join("lib64");
    let mut rpath = OsString::from("-Wl,-rpath,");
    rpath.push(&lib);
    vec![
        "-L".into(),
        lib.into_os_string(),
        rpath,
        "-lacl_rt".into(),
        "-pthread".into(),
        "-ldl".into(),
    ]
}

/// A C identifier unique to the unit of `source` compiled into `object`.
fn unit_id(source: &Path, object: &Path) -> String {
    // FNV-1a over both paths.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in source
        .as_os_str()
        .as_encoded_bytes()
        .iter()
        .chain([0u8].iter())
        .chain(object.as_os_str().as_encoded_bytes())
    {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("ascendc_host_u{h:016x}")
}

/// Assembly that embeds `binary` between the symbols `begin` and `end`.
fn blob_asm(begin: &str, end: &str, binary: &Path) -> String {
    let path = binary
        .display()
        .to_string()
        .replace('\\', "/")
        .replace('"', "\\\"");
    if cfg!(target_os = "macos") {
        format!(
            "\t.const_data\n\t.p2align 4\n\t.private_extern _{begin}\n\t.private_extern _{end}\n\
             _{begin}:\n\t.incbin \"{path}\"\n_{end}:\n"
        )
    } else {
        format!(
            "\t.section .rodata.{begin},\"a\"\n\t.balign 16\n\t.globl {begin}\n\t.hidden {begin}\n\
             \t.globl {end}\n\t.hidden {end}\n{begin}:\n\t.incbin \"{path}\"\n{end}:\n\
             \t.section .note.GNU-stack,\"\",@progbits\n"
        )
    }
}

/// The `-MF` file of a compilation's flags.
fn depfile(flags: &[OsString]) -> Option<PathBuf> {
    let mut it = flags.iter();
    while let Some(f) = it.next() {
        let s = f.to_string_lossy();
        if s == "-MF" {
            return it.next().map(PathBuf::from);
        }
        if let Some(p) = s.strip_prefix("-MF") {
            return Some(PathBuf::from(p));
        }
    }
    None
}

/// Makes a dependency file name the original source instead of the generated unit.
fn fix_depfile(dep: &Path, unit_cpp: &Path, source: &Path) {
    if let Ok(text) = std::fs::read_to_string(dep) {
        let fixed = text.replace(
            &unit_cpp.display().to_string(),
            &source.display().to_string(),
        );
        let _ = std::fs::write(dep, fixed);
    }
}

/// Runs a tool that should not fail: its messages make the error.
fn run_tool(cmd: &mut Command, what: &str) -> Result<(), Error> {
    let out = cmd
        .output()
        .map_err(|e| Error::new(format!("{what}: cannot run {:?}: {e}", cmd.get_program())))?;
    if out.status.success() {
        return Ok(());
    }
    Err(Error::new(format!(
        "{what} failed ({:?}):\n{}{}",
        cmd,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )))
}

/// Runs the compiler on a source. When its errors name AscendC APIs the host layer does not
/// provide, the error is one message naming them and pointing to the table of docs/kernels.md;
/// otherwise the compiler's own messages.
pub(crate) fn run_compiler(cmd: &mut Command, source: &Path) -> Result<(), Error> {
    let out = cmd.output().map_err(|e| {
        Error::new(format!(
            "cannot run the C++ compiler {:?}: {e}",
            cmd.get_program()
        ))
    })?;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if out.status.success() {
        if !stderr.trim().is_empty() {
            eprint!("{stderr}");
        }
        return Ok(());
    }
    let missing = unsupported_apis(&stderr);
    if !missing.is_empty() {
        // The compiler's own messages only on request: the one error names what is missing.
        if std::env::var_os("ASCENDC_HOST_VERBOSE").is_some_and(|v| v != "0") {
            eprint!("{stderr}");
        }
        return Err(Error::new(unsupported_message(source, &missing)));
    }
    Err(Error::new(format!(
        "the host C++ compiler failed on {} (host mode, AscendC host layer in {}):\n{stderr}",
        source.display(),
        include_dir().display()
    )))
}

/// The error for a kernel that uses AscendC APIs the host layer lacks.
pub(crate) fn unsupported_message(source: &Path, missing: &[(String, String)]) -> String {
    let (first, at) = &missing[0];
    let mut m = format!(
        "{at}: {} uses AscendC::{first}, which the AscendC host layer does not provide (host \
         mode runs the APIs listed in the table \"AscendC on the host: what the host layer \
         supports\" of ascendc-build's docs/kernels.md)",
        source.display()
    );
    if missing.len() > 1 {
        let others: Vec<&str> = missing[1..].iter().map(|(n, _)| n.as_str()).collect();
        m.push_str(&format!("; it also uses {}", others.join(", ")));
    }
    m
}

/// The documented AscendC APIs a compiler's errors say are missing, each with where it was
/// first used (`file:line`), in order of appearance.
pub(crate) fn unsupported_apis(stderr: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in stderr.lines() {
        let Some(name) = missing_name(line) else {
            continue;
        };
        if !is_api_name(&name) || out.iter().any(|(n, _)| *n == name) {
            continue;
        }
        let at = line.split(": error").next().unwrap_or("").to_string();
        out.push((name, at));
    }
    out
}

/// The name a "not declared" / "not a member" / "does not name a type" error is about.
fn missing_name(line: &str) -> Option<String> {
    if !line.contains("error") {
        return None;
    }
    // GCC quotes with ‘’ in a UTF-8 locale and with '' otherwise.
    let line = &line.replace(['‘', '’'], "'");
    let patterns = [
        "is not a member of 'AscendC",
        "was not declared in this scope",
        "in namespace 'AscendC' does not name a",
        "has not been declared",
        "no member named '",
        "use of undeclared identifier '",
    ];
    if !patterns.iter().any(|p| line.contains(p)) {
        return None;
    }
    // The first quoted name of the message: 'AscendC::X' or 'X'.
    let rest = line.split(": error: ").nth(1).unwrap_or(line);
    let start = rest.find(['\'', '‘'])?;
    let tail = &rest[start + rest[start..].chars().next()?.len_utf8()..];
    let end = tail.find(['\'', '’'])?;
    let name = tail[..end].trim_start_matches("AscendC::");
    let name = name.split('<').next().unwrap_or(name);
    (!name.is_empty()).then(|| name.to_string())
}

/// Whether `name` is a documented AscendC API.
fn is_api_name(name: &str) -> bool {
    API_NAMES.lines().any(|l| l.trim() == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsupported_apis_are_read_from_compiler_errors() {
        let gcc = "k.asc:12:14: error: 'GatherMask' is not a member of 'AscendC'\n\
                   k.asc:13:5: error: 'Frobnicate' was not declared in this scope\n\
                   k.asc:20:14: error: 'GatherMask' is not a member of 'AscendC'\n\
                   k.asc:30:9: error: 'SoftMaxShapeInfo' in namespace 'AscendC' does not name a type";
        let found = unsupported_apis(gcc);
        let names: Vec<&str> = found.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["GatherMask", "SoftMaxShapeInfo"]);
        assert_eq!(found[0].1, "k.asc:12:14");
        let clang = "k.asc:3:10: error: no member named 'GatherMask' in namespace 'AscendC'";
        assert_eq!(unsupported_apis(clang)[0].0, "GatherMask");
        let m = unsupported_message(Path::new("k.asc"), &found);
        assert!(
            m.starts_with("k.asc:12:14: k.asc uses AscendC::GatherMask"),
            "{m}"
        );
        assert!(m.contains("docs/kernels.md") && m.contains("also uses SoftMaxShapeInfo"));
        assert!(unsupported_apis("k.asc:1:1: error: expected ';'").is_empty());
        let utf8 = "k.asc:66:46: error: ‘Sort32’ is not a member of ‘AscendC’";
        assert_eq!(unsupported_apis(utf8)[0].0, "Sort32");
    }

    #[test]
    fn dependency_files_name_the_source() {
        let flags: Vec<OsString> = ["-MD", "-MT", "x.o", "-MF", "x.o.d"]
            .iter()
            .map(OsString::from)
            .collect();
        assert_eq!(depfile(&flags), Some(PathBuf::from("x.o.d")));
        assert_eq!(
            depfile(&[OsString::from("-MFy.d")]),
            Some(PathBuf::from("y.d"))
        );
        assert_eq!(depfile(&[]), None);
    }

    #[test]
    fn unit_ids_are_c_identifiers_that_differ_per_object() {
        let a = unit_id(Path::new("/s/add.asc"), Path::new("/b/add.o"));
        let b = unit_id(Path::new("/s/add.asc"), Path::new("/b/other.o"));
        assert_ne!(a, b);
        assert!(a.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
    }
}
