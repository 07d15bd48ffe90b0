//! The option tables: per program, its options and what their values are (see
//! [`Table`] for the entry syntax). Data only; [`mod@super::parse`] reads command lines against
//! them and `args` maps what they find onto risks.

use std::sync::LazyLock;

use super::model::{Compiled, Style, Table};

/// GNU `getopt_long`: clusters, attached values, unambiguous prefixes of long options.
const GNU: Style = Style {
    prefixes: true,
    single_dash_long: false,
    posix: false,
    assignments: false,
    old_tar: false,
    response_files: false,
    numeric: false,
};

/// Short clusters and exact long names (clap, lexopt, popt, curl).
const EXACT: Style = Style {
    prefixes: false,
    ..GNU
};

const fn table(
    programs: &'static [&'static str],
    style: Style,
    complete: bool,
    options: &'static str,
) -> Table {
    Table {
        programs,
        style,
        complete,
        expansions_risky: false,
        options,
    }
}

/// Like [`table`], for programs whose options a run-time word could turn into a risky one.
const fn watched(
    programs: &'static [&'static str],
    style: Style,
    complete: bool,
    options: &'static str,
) -> Table {
    Table {
        programs,
        style,
        complete,
        expansions_risky: true,
        options,
    }
}

/// Every table.
pub static TABLES: &[Table] = &[
    watched(
        &["sort"],
        GNU,
        true,
        "-b|--ignore-leading-blanks -d|--dictionary-order -f|--ignore-case -g|--general-numeric-sort -i|--ignore-nonprinting -M|--month-sort -h|--human-numeric-sort -n|--numeric-sort -R|--random-sort --random-source=r -r|--reverse --sort= -V|--version-sort --batch-size= -c --check? -C --compress-program=x --debug --files0-from=@ -k|--key= -m|--merge -o|--output=w -s|--stable -S|--buffer-size= -t|--field-separator= -T|--temporary-directory=d -u|--unique -z|--zero-terminated --parallel= --help --version",
    ),
    table(
        &["tee"],
        GNU,
        true,
        "-a|--append -i|--ignore-interrupts -p --output-error? --help --version",
    ),
    table(
        &["uniq"],
        GNU,
        false,
        "-c|--count -d|--repeated -D --all-repeated? -f|--skip-fields= --group? -i|--ignore-case -s|--skip-chars= -u|--unique -z|--zero-terminated -w|--check-chars= --help --version",
    ),
    table(
        &["cp"],
        GNU,
        true,
        "-a|--archive --attributes-only --backup? -b --copy-contents -d -f|--force -i|--interactive -H -l|--link -L|--dereference -n|--no-clobber -P|--no-dereference -p --preserve? --no-preserve= --parents -r|-R|--recursive --reflink? --remove-destination --sparse= --strip-trailing-slashes -s|--symbolic-link -S|--suffix= -t|--target-directory=d -T|--no-target-directory -u --update? -v|--verbose -x|--one-file-system -Z --context? --keep-directory-symlink --debug --help --version",
    ),
    table(
        &["mv"],
        GNU,
        true,
        "--backup? -b --debug --exchange -f|--force -i|--interactive -n|--no-clobber --no-copy --strip-trailing-slashes -S|--suffix= -t|--target-directory=d -T|--no-target-directory -u --update? -v|--verbose -Z|--context --help --version",
    ),
    table(
        &["install"],
        GNU,
        true,
        "--backup? -b -c -C|--compare -d|--directory -D -g|--group= -m|--mode= -o|--owner= -p|--preserve-timestamps -s|--strip --strip-program=x -S|--suffix= -t|--target-directory=d -T|--no-target-directory -v|--verbose --preserve-context -Z --context? --debug --help --version",
    ),
    table(
        &["ln"],
        GNU,
        true,
        "--backup? -b -d|-F|--directory -f|--force -i|--interactive -L|--logical -n|--no-dereference -P|--physical -r|--relative -s|--symbolic -S|--suffix= -t|--target-directory=d -T|--no-target-directory -v|--verbose --help --version",
    ),
    table(&["link", "unlink"], GNU, false, "--help --version"),
    table(
        &["rm"],
        GNU,
        true,
        "-f|--force -i -I --interactive? --one-file-system --no-preserve-root --preserve-root? -r|-R|--recursive -d|--dir -v|--verbose --help --version",
    ),
    table(
        &["rmdir"],
        GNU,
        true,
        "--ignore-fail-on-non-empty -p|--parents -v|--verbose --help --version",
    ),
    table(
        &["shred"],
        GNU,
        false,
        "-f|--force -n|--iterations= --random-source=r -s|--size= -u --remove? -v|--verbose -x|--exact -z|--zero --help --version",
    ),
    table(
        &["chmod"],
        GNU,
        true,
        "-c|--changes -f|--silent|--quiet -v|--verbose --no-preserve-root --preserve-root --reference=r -R|--recursive -h|--no-dereference --dereference -H -L -P --help --version",
    ),
    table(
        &["chown", "chgrp"],
        GNU,
        false,
        "-c|--changes -f|--silent|--quiet -v|--verbose -h|--no-dereference --dereference --from= --no-preserve-root --preserve-root --reference=r -R|--recursive -H -L -P --help --version",
    ),
    table(&["chattr"], EXACT, false, "-R -V -f -v= -p="),
    table(
        &["setfacl"],
        GNU,
        false,
        "-m|--modify= -M|--modify-file=r -x|--remove= -X|--remove-file=r -b|--remove-all -k|--remove-default --set= --set-file=r --mask -n|--no-mask -d|--default --restore=r --test -R|--recursive -L|--logical -P|--physical",
    ),
    table(
        &["touch"],
        GNU,
        true,
        "-a -c|--no-create -d|--date= -f -h|--no-dereference -m -r|--reference=r -t= --time= --help --version",
    ),
    table(
        &["truncate"],
        GNU,
        false,
        "-c|--no-create -o|--io-blocks -r|--reference=r -s|--size= --help --version",
    ),
    table(
        &["mkdir"],
        GNU,
        true,
        "-m|--mode= -p|--parents -v|--verbose -Z --context? --help --version",
    ),
    table(
        &["mkfifo", "mknod"],
        GNU,
        false,
        "-m|--mode= -Z --context? --help --version",
    ),
    table(
        &["split"],
        Style {
            numeric: true,
            ..GNU
        },
        false,
        "-a|--suffix-length= --additional-suffix= -b|--bytes= -C|--line-bytes= -d --numeric-suffixes? -x --hex-suffixes? -e|--elide-empty-files --filter=x -l|--lines= -n|--number= -t|--separator= -u|--unbuffered --verbose --help --version",
    ),
    table(
        &["csplit"],
        GNU,
        false,
        "-b|--suffix-format= -f|--prefix= -k|--keep-files --suppress-matched -n|--digits= -s|--quiet|--silent -z|--elide-empty-files --help --version",
    ),
    table(
        &["dd"],
        Style {
            assignments: true,
            ..GNU
        },
        false,
        "of=m if=r bs= cbs= conv= count= ibs= iflag= obs= oflag= seek= skip= status= --help --version",
    ),
    table(
        &["unzip"],
        EXACT,
        true,
        "-l -t -p -v -Z -z -f -u -c -a -b -B -C -D -e -F -j -K -L -M -n -o -q -s -U -V -W -X -Y -: -^ -2 -T -h -x -d=d -P= -O= -I=",
    ),
    watched(
        &["tar"],
        Style {
            old_tar: true,
            ..GNU
        },
        false,
        "-x|--extract|--get -c|--create -r|--append -u|--update -A|--catenate|--concatenate --delete -t|--list -d|--diff|--compare -f|--file= -C|--directory= --checkpoint-action=x --to-command=x -I|--use-compress-program=x -F|--info-script|--new-volume-script=x --rsh-command=x --rmt-command=x -b|--blocking-factor= -H|--format= -K|--starting-file= -L|--tape-length= -N|--newer|--after-date= -T|--files-from=@ -X|--exclude-from=r -V|--label= -g|--listed-incremental=w -G|--incremental --exclude= --transform|--xform= --owner= --group= --mode= --mtime= --strip-components= --checkpoint? --index-file=w --volno-file=w -z|--gzip|--gunzip|--ungzip -j|--bzip2 -J|--xz -Z|--compress|--uncompress --zstd --lzma --lzip --lzop -a|--auto-compress -v|--verbose -k|--keep-old-files -O|--to-stdout -p|--preserve-permissions|--same-permissions -P|--absolute-names -h|--dereference -m|--touch -o -s|--same-order|--preserve-order -S|--sparse -W|--verify -w|--interactive|--confirmation -l|--check-links -U|--unlink-first -M|--multi-volume -R|--block-number -B|--read-full-records -i|--ignore-zeros -n|--seek --no-seek --overwrite --overwrite-dir --no-overwrite-dir --keep-newer-files --keep-directory-symlink --skip-old-files --remove-files --recursion --no-recursion --wildcards --no-wildcards --anchored --no-anchored --ignore-case --no-ignore-case --totals? --sort= --numeric-owner --no-same-owner --same-owner --no-same-permissions --exclude-vcs --exclude-vcs-ignores --exclude-caches --exclude-backups --one-file-system --show-transformed-names --show-stored-names --warning= --null --no-null --utc --full-time --occurrence? --atime-preserve? --delay-directory-restore --restrict --quoting-style= --pax-option= --posix --level= --ignore-failed-read --force-local --backup? --suffix= --owner-map= --group-map= --record-size= --selinux --acls --xattrs --exclude-tag= --exclude-ignore= --add-file=r --help --usage --version",
    ),
    table(
        &["cpio"],
        GNU,
        false,
        "-i|--extract -o|--create -p|--pass-through -t|--list -F|--file= -O= -I= -E|--pattern-file=r -H|--format= -D|--directory= --rsh-command=x -M|--message=",
    ),
    table(
        &["patch"],
        GNU,
        false,
        "--dry-run -o|--output=m -i|--input=r -d|--directory= -p|--strip= -D|--ifdef= -F|--fuzz= -r|--reject-file=w -B|--prefix= -Y|--basename-prefix= -z|--suffix= -V|--version-control= -b|--backup -R|--reverse -N|--forward -f|--force -s|--quiet|--silent -t|--batch -g|--get=",
    ),
    table(
        &["rsync"],
        EXACT,
        false,
        "-e|--rsh=x --rsync-path=x --log-file=w --write-batch=w --only-write-batch=w --files-from=@ --exclude-from=r --include-from=r --password-file=r -B|--block-size= --exclude= --include= -f|--filter= --chmod= -T|--temp-dir= --partial-dir= --backup-dir= --suffix= --compare-dest= --copy-dest= --link-dest= --timeout= --contimeout= --bwlimit= --port= --max-size= --min-size= --max-delete= --modify-window=",
    ),
    table(
        &["wget"],
        GNU,
        false,
        "-O|--output-document=m -o|--output-file=m -a|--append-output=m -P|--directory-prefix=d -e|--execute=c --config=@ -i|--input-file=@ --use-askpass?x --save-cookies=w --warc-file=w --rejected-log=w --post-file=r --body-file=r --load-cookies=r --ca-certificate=r --certificate=r --private-key=r -n= -t|--tries= -T|--timeout= -w|--wait= -U|--user-agent= --header= -Q|--quota= -l|--level= -A|--accept= -R|--reject= -D|--domains= --exclude-domains= -I|--include-directories= -X|--exclude-directories= --user= --password= --referer= --limit-rate= --post-data= --method= --body-data= -B|--base= --bind-address= --dns-timeout= --connect-timeout= --read-timeout= --waitretry= --restrict-file-names= --default-page= --cut-dirs= --progress= --max-redirect= --http-user= --http-password= -q|--quiet -v|--verbose -c|--continue -N|--timestamping -r|--recursive -m|--mirror -k|--convert-links -p|--page-requisites -S|--server-response --spider -x|--force-directories -E|--adjust-extension -b|--background -F|--force-html -H|--span-hosts -L|--relative -K|--backup-converted --no-check-certificate --content-disposition",
    ),
    table(
        &["curl"],
        GNU,
        false,
        "-o|--output=m -O|--remote-name -J|--remote-header-name --remote-name-all --output-dir=d --create-dirs -K|--config=@ -D|--dump-header=w -c|--cookie-jar=w --trace=w --trace-ascii=w --stderr=w --libcurl=w --etag-save=w --hsts=w --alt-svc=w -T|--upload-file=r --url=n -d|--data= --data-binary= --data-raw= --data-ascii= --data-urlencode= --json= -F|--form= --form-string= -H|--header= -u|--user= -A|--user-agent= -e|--referer= -X|--request= -b|--cookie= -m|--max-time= --connect-timeout= -r|--range= -w|--write-out= -x|--proxy= -U|--proxy-user= -E|--cert= --key= --cacert= --capath= -C|--continue-at= -y|--speed-time= -Y|--speed-limit= -z|--time-cond= --retry= --retry-delay= --retry-max-time= --max-redirs= --max-filesize= --limit-rate= --resolve= --connect-to= --interface= -Q|--quote= -P|--ftp-port= --url-query= -f|--fail --fail-with-body -s|--silent -S|--show-error -L|--location -k|--insecure -v|--verbose -I|--head -i|--include -G|--get -N|--no-buffer -#|--progress-bar -q|--disable -n|--netrc -l|--list-only -a|--append -g|--globoff -j|--junk-session-cookies -p|--proxytunnel -R|--remote-time -Z|--parallel --compressed -4|--ipv4 -6|--ipv6 -0|--http1.0 --http1.1 --http2 --http3",
    ),
    watched(
        &["rg"],
        EXACT,
        false,
        "--pre=x --hostname-bin=x -z|--search-zip!x --pre-glob= -e|--regexp= -f|--file=r -g|--glob= --iglob= -t|--type= -T|--type-not= --type-add= -A|--after-context= -B|--before-context= -C|--context= -m|--max-count= -j|--threads= -M|--max-columns= -E|--encoding= -r|--replace= --colors= --color= --sort= --sortr= -d|--max-depth= --max-filesize= --ignore-file=r --path-separator= --context-separator= --field-match-separator= --field-context-separator= --engine= --dfa-size-limit= --regex-size-limit= --type-clear= --hyperlink-format=",
    ),
    watched(
        &["sed"],
        GNU,
        true,
        "-n|--quiet|--silent -e|--expression= -f|--file=@ -i|--in-place? -l|--line-length= -E|-r|--regexp-extended -s|--separate -u|--unbuffered -z|--null-data|--zero-terminated --posix --debug --sandbox --follow-symlinks -b|--binary --help --version",
    ),
    watched(
        &["make", "gmake"],
        Style {
            assignments: true,
            ..GNU
        },
        false,
        "-E|--eval=c -C|--directory=x -f|--file|--makefile=x -I|--include-dir=x *=c -j|--jobs? -l|--load-average|--max-load? -o|--old-file|--assume-old= -W|--what-if|--new-file|--assume-new= -O|--output-sync? --debug? -d -e|--environment-overrides -i|--ignore-errors -k|--keep-going -S|--no-keep-going|--stop -n|--just-print|--dry-run|--recon -q|--question -r|--no-builtin-rules -R|--no-builtin-variables -s|--silent|--quiet --no-silent -t|--touch -v|--version -w|--print-directory --no-print-directory --warn-undefined-variables -B|--always-make -L|--check-symlink-times -p|--print-data-base -b -m -h|--help --trace --shuffle?",
    ),
    table(
        &["cargo"],
        EXACT,
        false,
        "--config=c -Z=c -C=x --manifest-path=x --target-dir=w --artifact-dir=d -p|--package= --bin= --example= --test= --bench= -F|--features= -j|--jobs= --target= --profile= --color= --message-format= --lockfile-path= --exclude= -v|--verbose -q|--quiet -r|--release --offline --locked --frozen --all-targets --all-features --no-default-features --workspace --lib --bins --tests --benches --examples --no-run --no-fail-fast",
    ),
    table(
        &["go"],
        Style {
            single_dash_long: true,
            ..EXACT
        },
        false,
        "-exec=x -toolexec=x -vettool=x -C=x -o=m -modfile=r -overlay=r -coverprofile=w -cpuprofile=w -memprofile=w -blockprofile=w -mutexprofile=w -trace=w -outputdir=d -run= -bench= -count= -timeout= -tags= -p= -ldflags= -gcflags= -asmflags= -gccgoflags= -mod= -covermode= -coverpkg= -benchtime= -parallel= -pkgdir= -buildmode= -compiler= -installsuffix= -pgo= -skip= -shuffle= -fuzz= -fuzztime= -list= -v -x -n -a -race -msan -asan -cover -json -short -failfast -benchmem -trimpath -work -buildvcs=",
    ),
    table(
        &["npm", "pnpm", "yarn", "npx"],
        GNU,
        false,
        "--script-shell=x --node-options=c --prefix=x --userconfig=@ --globalconfig=@ -c|--call=x -C|--dir=x --cwd=x --global-dir=x --use-yarnrc=@ --rc-filename=@",
    ),
    table(
        &["pytest", "py.test"],
        Style {
            response_files: true,
            ..GNU
        },
        false,
        "--basetemp=t --junitxml|--junit-xml=w --log-file=w --resultlog|--result-log=w --report-log=w -c|--config-file|--inifile=@ --rootdir= --confcutdir= -o|--override-ini= -k= -m= --maxfail= --tb= --durations= --deselect= --ignore= --ignore-glob= --import-mode= --capture= -p= -n|--numprocesses= --cov= --cov-report= -x|--exitfirst -q|--quiet -v|--verbose -s -l|--showlocals -r=",
    ),
    table(
        &["gcc", "g++", "cc", "c++", "clang", "clang++"],
        Style {
            response_files: true,
            ..EXACT
        },
        false,
        "-o=m -B=x",
    ),
    table(
        &["rustc"],
        Style {
            response_files: true,
            ..EXACT
        },
        false,
        "-o=m --out-dir=d -L= --crate-name= --crate-type= --edition= --emit= --target= --cfg= -l=",
    ),
    table(
        &["javac", "java", "ld"],
        Style {
            response_files: true,
            single_dash_long: true,
            ..EXACT
        },
        false,
        "-d=d -o=m",
    ),
    table(
        &["node"],
        GNU,
        false,
        "--env-file=@ --env-file-if-exists=@ -r|--require=c --import=c --loader|--experimental-loader=c -e|--eval=c -p|--print=c",
    ),
];

/// The git global options that matter, read exactly as git reads them (no prefixes).
pub static GIT_GLOBAL: Table = table(
    &["git"],
    Style {
        posix: true,
        ..EXACT
    },
    false,
    "-c=c --config-env=c -C=x --git-dir=x --work-tree=x --namespace=x --exec-path?x -p|--paginate!x",
);

/// git subcommand options, by subcommand (`*`: every other one). git's option parser takes
/// unambiguous prefixes of long options and clusters of short ones.
pub static GIT_SUBCOMMANDS: &[(&str, Table)] = &[
    (
        "clone",
        table(
            &["git"],
            GNU,
            false,
            "-u|--upload-pack=x --template=x -c|--config=c -o|--origin= -b|--branch= --depth= --shallow-since= --shallow-exclude= --reference= --reference-if-able= --separate-git-dir=d -j|--jobs= --filter= --server-option= --bundle-uri= --ref-format= --recurse-submodules? --revision= -l|--local --no-local -s|--shared --dissociate -q|--quiet -v|--verbose --progress -n|--no-checkout --bare --sparse --mirror --single-branch --no-single-branch --no-tags --tags --shallow-submodules --remote-submodules --also-filter-submodules --reject-shallow --no-hardlinks",
        ),
    ),
    (
        "init",
        table(
            &["git"],
            GNU,
            false,
            "--template=x -c|--config=c --separate-git-dir=d -b|--initial-branch= --object-format= --ref-format= --shared? -q|--quiet --bare",
        ),
    ),
    (
        "rebase",
        table(
            &["git"],
            GNU,
            false,
            "-x|--exec=x --onto= -s|--strategy= -X|--strategy-option= -C= --whitespace= -S|--gpg-sign? -i|--interactive -r|--rebase-merges? --autosquash --autostash --continue --abort --skip -q|--quiet -v|--verbose -f|--force-rebase --root --update-refs",
        ),
    ),
    (
        "difftool",
        table(
            &["git"],
            GNU,
            false,
            "-x|--extcmd=x -t|--tool=x --tool-help -y|--no-prompt --prompt -g|--gui -d|--dir-diff --output=w --ext-diff!x",
        ),
    ),
    (
        "mergetool",
        table(
            &["git"],
            GNU,
            false,
            "-t|--tool=x --tool-help -y|--no-prompt --prompt -g|--gui -O?",
        ),
    ),
    (
        "format-patch",
        table(
            &["git"],
            GNU,
            false,
            "-o|--output-directory=d --output=w -v|--reroll-count= --subject-prefix= --to= --cc= --from? -n|--numbered -N|--no-numbered --stdout --cover-letter",
        ),
    ),
    (
        "archive",
        table(
            &["git"],
            GNU,
            false,
            "-o|--output=w --exec=x --remote= --format= --prefix= --add-file=r --add-virtual-file= -l|--list -v|--verbose",
        ),
    ),
    (
        "grep",
        table(
            &["git"],
            GNU,
            false,
            "-O|--open-files-in-pager?x -e= -f=r -A|--after-context= -B|--before-context= -C|--context= -m|--max-count= --threads= --max-depth= -i|--ignore-case -n|--line-number -l|--files-with-matches -L|--files-without-match -c|--count -v|--invert-match -w|--word-regexp -E|--extended-regexp -F|--fixed-strings -P|--perl-regexp -h -H -q|--quiet -z|--null --cached --untracked --no-index --recurse-submodules -a|--text -I -r|--recursive --and --or --not --all-match --column -o|--only-matching -p|--show-function -W|--function-context --break --heading --full-name",
        ),
    ),
    (
        "*",
        table(
            &["git"],
            GNU,
            false,
            "--output=w --ext-diff!x --upload-pack=x --receive-pack=x --exec=x",
        ),
    ),
];

static COMPILED: LazyLock<Vec<Compiled>> =
    LazyLock::new(|| TABLES.iter().map(Compiled::new).collect());
static GIT_GLOBAL_COMPILED: LazyLock<Compiled> = LazyLock::new(|| Compiled::new(&GIT_GLOBAL));
static GIT_COMPILED: LazyLock<Vec<(&str, Compiled)>> = LazyLock::new(|| {
    GIT_SUBCOMMANDS
        .iter()
        .map(|(s, t)| (*s, Compiled::new(t)))
        .collect()
});

/// The table of program `prog` (its base name).
pub fn find(prog: &str) -> Option<&'static Compiled> {
    COMPILED.iter().find(|c| c.table.programs.contains(&prog))
}

/// git's global options.
pub fn git_global() -> &'static Compiled {
    &GIT_GLOBAL_COMPILED
}

/// The table of git subcommand `sub` (the shared one when it has none of its own).
pub fn git_subcommand(sub: &str) -> Option<&'static Compiled> {
    GIT_COMPILED
        .iter()
        .find(|(s, _)| *s == sub)
        .or_else(|| GIT_COMPILED.iter().find(|(s, _)| *s == "*"))
        .map(|(_, c)| c)
}

/// Every compiled table (the tests walk them).
pub fn all() -> impl Iterator<Item = &'static Compiled> {
    COMPILED
        .iter()
        .chain(std::iter::once(&*GIT_GLOBAL_COMPILED))
        .chain(GIT_COMPILED.iter().map(|(_, c)| c))
}
