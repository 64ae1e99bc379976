# fsarena built-in: blogbench, an approximation of BlogBench 1.1 (Frank Denis) in
# filebench's language, for the Phoronix round-up suite. BlogBench's blog: writers
# add articles (whole files), rewriters replace part of one, commenters append
# to one, readers read whole articles, all at once. The thread counts are
# BlogBench's defaults (3 writers, 1 rewriter, 5 commenters, 100 readers); file
# sizes follow its ~8-64 KiB articles. Unlike BlogBench, each writer also
# deletes an article after adding one: a filebench fileset has a fixed number of
# entries, and a run of only additions would use them up. It gives filebench's rates, not a
# BlogBench score: compare filesystems with it, not with BlogBench's numbers.
set $dir=/tmp
set $nfiles=2000
set $meandirwidth=100
set $filesize=cvar(type=cvar-gamma,parameters=mean:32768;gamma:1.5)
set $nwriters=3
set $nrewriters=1
set $ncommenters=5
set $nreaders=100
set $iosize=64k
set $commentsize=2k
set $runtime=60

define fileset name=blog,path=$dir,size=$filesize,entries=$nfiles,dirwidth=$meandirwidth,prealloc=50

define process name=blog,instances=1
{
  thread name=writer,memsize=10m,instances=$nwriters
  {
    flowop createfile name=newarticle,filesetname=blog,fd=1
    flowop writewholefile name=writearticle,srcfd=1,fd=1,iosize=$iosize
    flowop closefile name=closenew,fd=1
    flowop deletefile name=expirearticle,filesetname=blog
  }
  thread name=rewriter,memsize=10m,instances=$nrewriters
  {
    flowop openfile name=openrewrite,filesetname=blog,fd=1
    flowop writewholefile name=rewritearticle,srcfd=1,fd=1,iosize=$iosize
    flowop closefile name=closerewrite,fd=1
  }
  thread name=commenter,memsize=10m,instances=$ncommenters
  {
    flowop openfile name=opencomment,filesetname=blog,fd=1
    flowop appendfilerand name=comment,iosize=$commentsize,fd=1
    flowop closefile name=closecomment,fd=1
  }
  thread name=reader,memsize=10m,instances=$nreaders
  {
    flowop openfile name=openread,filesetname=blog,fd=1
    flowop readwholefile name=readarticle,fd=1,iosize=$iosize
    flowop closefile name=closeread,fd=1
  }
}

run $runtime
