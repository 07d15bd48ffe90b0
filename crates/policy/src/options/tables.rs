//! The option tables: per program, its options and what their values are (see
//! [`Table`] for the entry syntax). Data only; [`mod@super::parse`] reads command lines against
//! them and `args` maps what they find onto risks.

use std::sync::LazyLock;

use super::model::{Compiled, Style, Table};

/// Shorthand for [`Style::GNU`].
const GNU: Style = Style::GNU;

/// GNU rules, and `--no-NAME` negates the flag `--NAME` (wget, curl).
const NEGATABLE: Style = Style {
    negations: true,
    ..GNU
};

/// Shorthand for [`Style::EXACT`].
const EXACT: Style = Style::EXACT;

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
    // GNU tar 1.35: every option of the manual, with its aliases.
    watched(
        &["tar"],
        Style {
            old_tar: true,
            ..GNU
        },
        true,
        "-A|--catenate|--concatenate -c|--create --delete -d|--diff|--compare -r|--append --test-label -t|--list -u|--update -x|--extract|--get --check-device -g|--listed-incremental=w -G|--incremental --hole-detection= --ignore-failed-read --level= --no-check-device --no-seek -n|--seek --occurrence? --sparse-version= --sparse --add-file=r -C|--directory= --exclude= --exclude-backups --exclude-caches --exclude-caches-all --exclude-caches-under --exclude-ignore= --exclude-ignore-recursive= --exclude-tag= --exclude-tag-all= --exclude-tag-under= --exclude-vcs --exclude-vcs-ignores --no-null --no-recursion --no-unquote --no-verbatim-files-from --null --verbatim-files-from --recursion -T|--files-from=@ --unquote -X|--exclude-from=r --anchored --ignore-case --no-anchored --no-ignore-case --no-wildcards --no-wildcards-match-slash --wildcards --wildcards-match-slash --keep-directory-symlink --keep-newer-files -k|--keep-old-files --no-overwrite-dir --one-top-level? --overwrite --overwrite-dir --recursive-unlink --remove-files --skip-old-files -U|--unlink-first -W|--verify --ignore-command-error --no-ignore-command-error -O|--to-stdout --to-command=x --atime-preserve? --clamp-mtime --delay-directory-restore --group= --group-map=r --mode= --mtime= -m|--touch --no-delay-directory-restore --no-same-owner --no-same-permissions --numeric-owner --owner= --owner-map=r -p|--preserve-permissions|--same-permissions --same-owner --sort= -s|--preserve-order|--same-order --acls --no-acls --no-selinux --no-xattrs --selinux --xattrs --xattrs-exclude= --xattrs-include= --force-local -f|--file= -F|--info-script|--new-volume-script=x -L|--tape-length= -M|--multi-volume --rmt-command=x --rsh-command=x --volno-file=w -b|--blocking-factor= -B|--read-full-records -i|--ignore-zeros --record-size= -H|--format= --old-archive --pax-option= --posix -V|--label= -a|--auto-compress -I|--use-compress-program=x -j|--bzip2 -J|--xz --lzip --lzma --lzop --no-auto-compress --zstd -z|--gzip|--gunzip|--ungzip -Z|--compress|--uncompress --backup? --hard-dereference -h|--dereference -K|--starting-file= --newer-mtime= -N|--newer|--after-date= --one-file-system -P|--absolute-names --suffix= --strip-components= --transform|--xform= --checkpoint? --checkpoint-action=x --full-time --index-file=w -l|--check-links --no-quote-chars= --quote-chars= --quoting-style= -R|--block-number --show-defaults --show-omitted-dirs --show-snapshot-field-ranges --show-transformed-names --totals? --utc -v|--verbose --warning= -w|--interactive|--confirmation --help --restrict --usage --version -o -S|--sparse! --set-mtime-command=x --set-mtime-format= --show-stored-names --no-quote-chars=",
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
        "-a|--archive -r|--recursive -L|--copy-links -l|--links -p|--perms -t|--times -g|--group -o|--owner -D -v|--verbose -q|--quiet -z|--compress -h|--human-readable -P -n|--dry-run -u|--update -c|--checksum -R|--relative -H|--hard-links -x|--one-file-system --delete --progress --partial --stats -e|--rsh=x --rsync-path=x --log-file=w --write-batch=w --only-write-batch=w --files-from=@ --exclude-from=r --include-from=r --password-file=r -B|--block-size= --exclude= --include= -f|--filter= --chmod= -T|--temp-dir= --partial-dir= --backup-dir= --suffix= --compare-dest= --copy-dest= --link-dest= --timeout= --contimeout= --bwlimit= --port= --max-size= --min-size= --max-delete= --modify-window=",
    ),
    // GNU Wget 1.25: every option of the manual; `--no-NAME` turns a flag off.
    table(
        &["wget"],
        NEGATABLE,
        true,
        "-V|--version -h|--help -b|--background -e|--execute=c -o|--output-file=m -a|--append-output=m -d|--debug -q|--quiet -v|--verbose --no-verbose --report-speed= -i|--input-file=@ -F|--force-html -B|--base= --config=@ --no-config --rejected-log=w -t|--tries= --retry-connrefused --retry-on-http-error= -O|--output-document=m --no-clobber --no-netrc -c|--continue --start-pos= --progress= --show-progress -N|--timestamping --no-if-modified-since --no-use-server-timestamps -S|--server-response --spider -T|--timeout= --dns-timeout= --connect-timeout= --read-timeout= -w|--wait= --waitretry= --random-wait --no-proxy -Q|--quota= --bind-address= --limit-rate= --no-dns-cache --restrict-file-names= --ignore-case -4|--inet4-only -6|--inet6-only --prefer-family= --user= --password= --ask-password --use-askpass?x --no-iri --local-encoding= --remote-encoding= --unlink --xattr --no-directories -x|--force-directories --no-host-directories --protocol-directories -P|--directory-prefix=d --cut-dirs= --http-user= --http-password= --no-cache --default-page= -E|--adjust-extension|--html-extension --ignore-length --header= --compression= --max-redirect= --proxy-user= --proxy-password= --referer= --save-headers -U|--user-agent= --no-http-keep-alive --no-cookies --load-cookies=r --save-cookies=w --keep-session-cookies --post-data= --post-file=r --method= --body-data= --body-file=r --content-disposition --content-on-error --auth-no-challenge --secure-protocol= --https-only --no-check-certificate --certificate=r --certificate-type= --private-key=r --private-key-type= --ca-certificate=r --ca-directory=r --crl-file=r --pinnedpubkey=r --ciphers= --no-hsts --hsts-file=w --ftp-user= --ftp-password= --no-remove-listing --no-glob --no-passive-ftp --preserve-permissions --retr-symlinks --ftps-implicit --ftps-resume-ssl --ftps-clear-data-connection --ftps-fallback-to-ftp --warc-file=w --warc-header= --warc-max-size= --warc-cdx --warc-dedup=r --no-warc-compression --no-warc-digests --no-warc-keep-log --warc-tempdir=d -r|--recursive -l|--level= --delete-after -k|--convert-links --convert-file-only --backups= -K|--backup-converted -m|--mirror -p|--page-requisites --strict-comments -A|--accept= -R|--reject= --accept-regex= --reject-regex= --regex-type= -D|--domains= --exclude-domains= --follow-ftp --follow-tags= --ignore-tags= -H|--span-hosts -L|--relative -I|--include-directories= --trust-server-names -X|--exclude-directories= --no-parent -n= --input-metalink=@ --metalink-over-http --metalink-index= --preferred-location= --keep-badhash --retry-on-host-error --no-xattr",
    ),
    // curl 8: every option of the manual; `--no-NAME` turns a flag off.
    table(
        &["curl"],
        NEGATABLE,
        true,
        "--abstract-unix-socket=n --alt-svc=w --anyauth -a|--append --aws-sigv4= --basic --cacert=r --capath=r -E|--cert=r --cert-status --cert-type= --ciphers= --compressed --compressed-ssh -K|--config=@ --connect-timeout= --connect-to= -C|--continue-at= -b|--cookie= -c|--cookie-jar=w --create-dirs --create-file-mode= --crlf --crlfile=r --curves= -d|--data= --data-ascii= --data-binary= --data-raw= --data-urlencode= --delegation= --digest -q|--disable --disable-eprt --disable-epsv --disallow-username-in-url --dns-interface= --dns-ipv4-addr= --dns-ipv6-addr= --dns-servers= --doh-cert-status --doh-insecure --doh-url=n -D|--dump-header=w --egd-file=r --engine=c --etag-compare=r --etag-save=w --expect100-timeout= -f|--fail --fail-early --fail-with-body --false-start -F|--form= --form-escape --form-string= --ftp-account= --ftp-alternative-to-user= --ftp-create-dirs --ftp-method= --ftp-pasv -P|--ftp-port= --ftp-pret --ftp-skip-pasv-ip --ftp-ssl-ccc --ftp-ssl-ccc-mode= --ftp-ssl-control -G|--get -g|--globoff --happy-eyeballs-timeout-ms= --haproxy-protocol -I|--head -H|--header= -h|--help --hostpubmd5= --hostpubsha256= --hsts=w --http0.9 -0|--http1.0 --http1.1 --http2 --http2-prior-knowledge --http3 --http3-only --ignore-content-length -i|--include -k|--insecure --interface= -4|--ipv4 -6|--ipv6 --json= -j|--junk-session-cookies --keepalive-time= --key=r --key-type= --krb= --libcurl=w --limit-rate= -l|--list-only --local-port= -L|--location --location-trusted --login-options= --mail-auth= --mail-from= --mail-rcpt= --mail-rcpt-allowfails -M|--manual --max-filesize= --max-redirs= -m|--max-time= --metalink --negotiate -n|--netrc!r --netrc-file=r --netrc-optional -:|--next --no-alpn -N|--no-buffer --no-clobber --no-keepalive --no-npn --no-progress-meter --no-sessionid --noproxy= --ntlm --ntlm-wb --oauth2-bearer= -o|--output=m --output-dir=d -Z|--parallel --parallel-immediate --parallel-max= --pass= --path-as-is --pinnedpubkey= --post301 --post302 --post303 --preproxy=n -#|--progress-bar --proto= --proto-default= --proto-redir= -x|--proxy=n --proxy-anyauth --proxy-basic --proxy-cacert=r --proxy-capath=r --proxy-cert=r --proxy-cert-type= --proxy-ciphers= --proxy-crlfile=r --proxy-digest --proxy-header= --proxy-insecure --proxy-key=r --proxy-key-type= --proxy-negotiate --proxy-ntlm --proxy-pass= --proxy-pinnedpubkey= --proxy-service-name= --proxy-ssl-allow-beast --proxy-ssl-auto-client-cert --proxy-tls13-ciphers= --proxy-tlsauthtype= --proxy-tlspassword= --proxy-tlsuser= --proxy-tlsv1 -U|--proxy-user= --proxy1.0=n -p|--proxytunnel --pubkey=r -Q|--quote= --random-file=r -r|--range= --rate= --raw -e|--referer= -J|--remote-header-name -O|--remote-name --remote-name-all -R|--remote-time --remove-on-error -X|--request= --request-target= --resolve= --retry= --retry-all-errors --retry-connrefused --retry-delay= --retry-max-time= --sasl-authzid= --sasl-ir --service-name= -S|--show-error -s|--silent --socks4=n --socks4a=n --socks5=n --socks5-basic --socks5-gssapi --socks5-gssapi-nec --socks5-gssapi-service= --socks5-hostname=n -Y|--speed-limit= -y|--speed-time= --ssl --ssl-allow-beast --ssl-auto-client-cert --ssl-no-revoke --ssl-reqd --ssl-revoke-best-effort -2|--sslv2 -3|--sslv3 --stderr=w --styled-output --suppress-connect-headers --tcp-fastopen --tcp-nodelay -t|--telnet-option= --tftp-blksize= --tftp-no-options -z|--time-cond= --tls-max= --tls13-ciphers= --tlsauthtype= --tlspassword= --tlsuser= -1|--tlsv1 --tlsv1.0 --tlsv1.1 --tlsv1.2 --tlsv1.3 --tr-encoding --trace=w --trace-ascii=w --trace-time --unix-socket=n -T|--upload-file=r --url=n --url-query= -B|--use-ascii -u|--user= -A|--user-agent= -v|--verbose -V|--version -w|--write-out= --xattr --ca-native --proxy-ca-native --ech= --ipfs-gateway=n --variable= --skip-existing --out-null --trace-config= --trace-ids --mptcp --follow --dump-ca-embed --ssl-sessions=w --sigalgs= --upload-flags= --tls-earlydata --ip-tos= --vlan-priority= --proxy-http2 --haproxy-clientip= --knownhosts=r --keepalive-cnt= --show-headers --parallel-max-host=",
    ),
    table(
        &["scp"],
        EXACT,
        true,
        "-3 -4 -6 -A -B -C -O -p -q -R -r -T -v -c= -D=x -F=@ -i=r -J= -l= -o=c -P= -S=x -X=",
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
