# fsarena built-in: singlestreamread (sequential reads of one large file; filebench's defaults).
set $dir=/tmp
set $filesize=5g
set $nthreads=1
set $iosize=1m

define file name=largefile1,path=$dir,size=$filesize,prealloc,reuse

define process name=seqread,instances=1
{
  thread name=seqreadthread,memsize=10m,instances=$nthreads
  {
    flowop read name=seqread,filename=largefile1,iosize=$iosize
  }
}
